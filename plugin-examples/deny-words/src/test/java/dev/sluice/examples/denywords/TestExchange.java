package dev.sluice.examples.denywords;

import dev.sluice.api.codec.RequestPeek;
import dev.sluice.api.exchange.Exchange;
import dev.sluice.api.exchange.Headers;
import dev.sluice.api.model.ChatRequest;
import dev.sluice.api.model.Usage;

import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BiConsumer;
import java.util.function.Consumer;

/** A minimal {@link Exchange} over a canonical request; counts how often the request is decoded. */
class TestExchange implements Exchange
{
    private final String model;
    private final boolean stream;
    private final byte[] body;
    private final ChatRequest request;
    private final Map<String, Object> attributes = new HashMap<>();
    private String targetModel;
    private Usage usage;
    private int decodes;

    /**
     * @param request the request the body decodes to
     * @param body    the raw body
     */
    TestExchange(ChatRequest request, String body)
    {
        this.model = request.model();
        this.stream = request.stream();
        this.targetModel = model;
        this.request = request;
        this.body = body.getBytes(StandardCharsets.UTF_8);
    }

    /** @return how many times {@link #request()} was called */
    int decodes()
    {
        return decodes;
    }

    @Override
    public String id()
    {
        return "test-1";
    }

    @Override
    public long arrivalNanos()
    {
        return 0;
    }

    @Override
    public String method()
    {
        return "POST";
    }

    @Override
    public String path()
    {
        return "/v1/chat/completions";
    }

    @Override
    public String query()
    {
        return null;
    }

    @Override
    public Headers headers()
    {
        return new Headers()
        {
            @Override
            public String get(String name)
            {
                return null;
            }

            @Override
            public List<String> getAll(String name)
            {
                return List.of();
            }

            @Override
            public void forEach(BiConsumer<String, String> action)
            {
            }
        };
    }

    @Override
    public String dialect()
    {
        return "test";
    }

    @Override
    public byte[] body()
    {
        return body;
    }

    @Override
    public RequestPeek peek()
    {
        return new RequestPeek(model, stream, -1, -1);
    }

    @Override
    public String model()
    {
        return model;
    }

    @Override
    public boolean stream()
    {
        return stream;
    }

    @Override
    public String targetModel()
    {
        return targetModel;
    }

    @Override
    public void targetModel(String newModel)
    {
        this.targetModel = newModel;
    }

    @Override
    public ChatRequest request()
    {
        decodes++;
        return request;
    }

    @Override
    public void request(ChatRequest request)
    {
        throw new AssertionError("a guardrail that only reads must not replace the request");
    }

    @Override
    public boolean modified()
    {
        return false;
    }

    @Override
    public Object attribute(String name)
    {
        return attributes.get(name);
    }

    @Override
    public void attribute(String name, Object value)
    {
        if (value == null)
            attributes.remove(name);
        else
            attributes.put(name, value);
    }

    @Override
    public Usage usage()
    {
        return usage;
    }

    @Override
    public void usage(Usage newUsage)
    {
        this.usage = newUsage;
    }

    @Override
    public void onAbort(Consumer<Throwable> listener)
    {
    }
}
