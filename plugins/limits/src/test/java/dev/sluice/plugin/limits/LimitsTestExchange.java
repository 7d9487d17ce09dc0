package dev.sluice.plugin.limits;

import dev.sluice.api.ErrorKind;
import dev.sluice.api.codec.RequestPeek;
import dev.sluice.api.exchange.Completion;
import dev.sluice.api.exchange.Completion.CompletionListener;
import dev.sluice.api.exchange.Exchange;
import dev.sluice.api.exchange.Headers;
import dev.sluice.api.exchange.Exchange.Identity;
import dev.sluice.api.exchange.Exchange.Stage;
import dev.sluice.api.model.ChatRequest;
import dev.sluice.api.model.Message;
import dev.sluice.api.model.Message.Role;
import dev.sluice.api.model.ChatRequest.Sampling;
import dev.sluice.api.model.Usage;
import dev.sluice.api.testing.TestExchange;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

/**
 * The gateway-api test-jar's {@link TestExchange} with what the limits binding also reads: an identity and the
 * completion hook, which {@link #complete} fires as the runtime does (each listener once).
 */
final class LimitsTestExchange implements Exchange
{
    private final TestExchange delegate;
    private final List<CompletionListener> listeners = new ArrayList<>();
    private Identity identity;
    private boolean warmup;

    /** A request for {@code model} with one user message of {@code text} and {@code maxTokens} (or none). */
    LimitsTestExchange(String model, String text, Integer maxTokens)
    {
        Sampling sampling = new Sampling(null, null, null, maxTokens, List.of(), null, null, null);
        ChatRequest request = new ChatRequest(model, List.of(), List.of(Message.text(Role.USER, text)), List.of(), null,
            null, sampling, null, false, false, null, null, null);
        this.delegate = new TestExchange(request, "{\"model\":\"" + model + "\",\"messages\":[]}");
    }

    LimitsTestExchange as(Identity who)
    {
        this.identity = who;
        return this;
    }

    /** Makes it a warm-up exchange ({@link Exchange#warmup()}). */
    LimitsTestExchange asWarmup()
    {
        this.warmup = true;
        return this;
    }

    @Override
    public boolean warmup()
    {
        return warmup;
    }

    /** @return how often the request was decoded */
    int decodes()
    {
        return delegate.decodes();
    }

    /** @return the completion listeners registered */
    int listeners()
    {
        return listeners.size();
    }

    /** Completes the exchange: calls every listener with a completion of that outcome, status, usage and bytes. */
    void complete(Completion.Outcome outcome, int status, Usage usage, long responseBytes)
    {
        Completion completion = new TestCompletion(this, outcome, status, usage, responseBytes);
        for (CompletionListener listener : listeners)
            listener.completed(completion);
    }

    @Override
    public Identity identity()
    {
        return identity;
    }

    @Override
    public void identity(Identity who)
    {
        this.identity = who;
    }

    @Override
    public void onComplete(CompletionListener listener)
    {
        listeners.add(listener);
    }

    @Override
    public String id()
    {
        return delegate.id();
    }

    @Override
    public String method()
    {
        return delegate.method();
    }

    @Override
    public String path()
    {
        return delegate.path();
    }

    @Override
    public String query()
    {
        return delegate.query();
    }

    @Override
    public Headers headers()
    {
        return delegate.headers();
    }

    @Override
    public String dialect()
    {
        return delegate.dialect();
    }

    @Override
    public byte[] body()
    {
        return delegate.body();
    }

    @Override
    public RequestPeek peek()
    {
        return delegate.peek();
    }

    @Override
    public String model()
    {
        return delegate.model();
    }

    @Override
    public boolean stream()
    {
        return delegate.stream();
    }

    @Override
    public String targetModel()
    {
        return delegate.targetModel();
    }

    @Override
    public void targetModel(String model)
    {
        delegate.targetModel(model);
    }

    @Override
    public ChatRequest request()
    {
        return delegate.request();
    }

    @Override
    public void request(ChatRequest request)
    {
        delegate.request(request);
    }

    @Override
    public boolean modified()
    {
        return delegate.modified();
    }

    @Override
    public Object attribute(String name)
    {
        return delegate.attribute(name);
    }

    @Override
    public void attribute(String name, Object value)
    {
        delegate.attribute(name, value);
    }

    @Override
    public Usage usage()
    {
        return delegate.usage();
    }

    @Override
    public void usage(Usage usage)
    {
        delegate.usage(usage);
    }

    @Override
    public void onAbort(Consumer<Throwable> listener)
    {
        delegate.onAbort(listener);
    }

    /** A completion with the fields the limits binding reads. */
    private record TestCompletion(Exchange exchange, Outcome outcome, int status, Usage usage, long responseBytes)
        implements Completion
    {
        @Override
        public String id()
        {
            return exchange.id();
        }

        @Override
        public String server()
        {
            return "north";
        }

        @Override
        public String dialect()
        {
            return exchange.dialect();
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
        public ErrorKind errorKind()
        {
            return status >= 400 ? ErrorKind.UPSTREAM_ERROR : null;
        }

        @Override
        public String errorMessage()
        {
            return null;
        }

        @Override
        public String model()
        {
            return exchange.model();
        }

        @Override
        public String targetModel()
        {
            return exchange.targetModel();
        }

        @Override
        public boolean stream()
        {
            return exchange.stream();
        }

        @Override
        public Identity identity()
        {
            return exchange.identity();
        }

        @Override
        public long nanos(Stage stage)
        {
            return 0;
        }

        @Override
        public long requestBytes()
        {
            return exchange.body().length;
        }
    }
}
