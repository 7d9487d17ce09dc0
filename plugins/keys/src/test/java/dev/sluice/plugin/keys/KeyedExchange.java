package dev.sluice.plugin.keys;

import dev.sluice.api.codec.RequestPeek;
import dev.sluice.api.exchange.Exchange;
import dev.sluice.api.exchange.Headers;
import dev.sluice.api.model.ChatRequest;
import dev.sluice.api.model.Usage;
import dev.sluice.api.testing.TestExchange;

import java.util.function.Consumer;

/** A {@link TestExchange} that carries the key a client sent, as a server binding reads it. */
final class KeyedExchange implements Exchange
{
    private final TestExchange exchange;
    private final String key;
    private Identity identity;

    KeyedExchange(String model, String key)
    {
        this.exchange = new TestExchange(model);
        this.key = key;
    }

    @Override
    public String clientKey()
    {
        return key;
    }

    @Override
    public Identity identity()
    {
        return identity;
    }

    @Override
    public void identity(Identity identity)
    {
        this.identity = identity;
    }

    @Override
    public String id()
    {
        return exchange.id();
    }

    @Override
    public String method()
    {
        return exchange.method();
    }

    @Override
    public String path()
    {
        return exchange.path();
    }

    @Override
    public String query()
    {
        return exchange.query();
    }

    @Override
    public Headers headers()
    {
        return exchange.headers();
    }

    @Override
    public String dialect()
    {
        return exchange.dialect();
    }

    @Override
    public byte[] body()
    {
        return exchange.body();
    }

    @Override
    public RequestPeek peek()
    {
        return exchange.peek();
    }

    @Override
    public String model()
    {
        return exchange.model();
    }

    @Override
    public boolean stream()
    {
        return exchange.stream();
    }

    @Override
    public String targetModel()
    {
        return exchange.targetModel();
    }

    @Override
    public void targetModel(String model)
    {
        exchange.targetModel(model);
    }

    @Override
    public ChatRequest request()
    {
        return exchange.request();
    }

    @Override
    public void request(ChatRequest request)
    {
        exchange.request(request);
    }

    @Override
    public boolean modified()
    {
        return exchange.modified();
    }

    @Override
    public Object attribute(String name)
    {
        return exchange.attribute(name);
    }

    @Override
    public void attribute(String name, Object value)
    {
        exchange.attribute(name, value);
    }

    @Override
    public Usage usage()
    {
        return exchange.usage();
    }

    @Override
    public void usage(Usage usage)
    {
        exchange.usage(usage);
    }

    @Override
    public void onAbort(Consumer<Throwable> listener)
    {
        exchange.onAbort(listener);
    }
}
