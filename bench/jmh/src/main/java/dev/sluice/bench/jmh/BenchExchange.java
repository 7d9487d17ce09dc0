package dev.sluice.bench.jmh;

import dev.sluice.api.codec.RequestPeek;
import dev.sluice.api.exchange.Exchange;
import dev.sluice.api.exchange.Headers;
import dev.sluice.api.model.ChatRequest;
import dev.sluice.api.model.Usage;

import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.BiConsumer;
import java.util.function.Consumer;

/**
 * An {@link Exchange} that costs nothing per call, so a benchmark of a client binding measures the binding: the body,
 * its peek and the headers are fixed at construction, reading them allocates nothing, and {@link #usage(Usage)}
 * only keeps the last value. It never decodes: {@link #request()} throws, since the same-dialect path must not ask.
 * Not thread-safe; one per benchmark state.
 */
final class BenchExchange implements Exchange
{
    private final byte[] body;
    private final RequestPeek peek;
    private final List<Map.Entry<String, String>> headers;
    private final Headers view = new Headers()
    {
        @Override
        public String get(String name)
        {
            for (Map.Entry<String, String> h : headers)
            {
                if (h.getKey().equalsIgnoreCase(name))
                    return h.getValue();
            }
            return null;
        }

        @Override
        public List<String> getAll(String name)
        {
            String value = get(name);
            return value == null ? List.of() : List.of(value);
        }

        @Override
        public void forEach(BiConsumer<String, String> action)
        {
            for (Map.Entry<String, String> h : headers)
                action.accept(h.getKey(), h.getValue());
        }
    };
    private String targetModel;
    private Usage usage;

    /**
     * @param body    the client's request body
     * @param peek    what the server binding's peek found in it
     * @param headers the client's request headers, in order
     */
    BenchExchange(byte[] body, RequestPeek peek, List<Map.Entry<String, String>> headers)
    {
        this.body = body;
        this.peek = peek;
        this.headers = List.copyOf(headers);
        this.targetModel = peek.model();
    }

    @Override
    public String id()
    {
        return "bench-1";
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
        return view;
    }

    @Override
    public String dialect()
    {
        return "openai";
    }

    @Override
    public byte[] body()
    {
        return body;
    }

    @Override
    public RequestPeek peek()
    {
        return peek;
    }

    @Override
    public String model()
    {
        return peek.model();
    }

    @Override
    public boolean stream()
    {
        return peek.stream();
    }

    @Override
    public String targetModel()
    {
        return targetModel;
    }

    @Override
    public void targetModel(String model)
    {
        this.targetModel = Objects.requireNonNull(model, "model");
    }

    @Override
    public ChatRequest request()
    {
        throw new IllegalStateException("the same-dialect path must not decode the request");
    }

    @Override
    public void request(ChatRequest request)
    {
        throw new IllegalStateException("the benchmark does not modify the request");
    }

    @Override
    public boolean modified()
    {
        return false;
    }

    @Override
    public Object attribute(String name)
    {
        return null;
    }

    @Override
    public void attribute(String name, Object value)
    {
        throw new IllegalStateException("the client binding sets no attributes");
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
        // The benchmark never aborts.
    }
}
