package dev.sluice.plugin.gemini;

import dev.sluice.api.testing.TestBody;
import dev.sluice.api.exchange.Exchange;
import dev.sluice.api.upstream.BodySource;
import dev.sluice.api.upstream.Upstream;
import dev.sluice.api.upstream.UpstreamOptions;
import dev.sluice.api.upstream.UpstreamRequest;
import dev.sluice.api.upstream.UpstreamResponse;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Function;

/**
 * The runtime's HTTP client reduced to a recorder that answers every request with one canned response, or with the
 * response its {@code x-goog-api-key} is given.
 */
final class TestUpstream implements Upstream
{
    final List<UpstreamRequest> sent = new ArrayList<>();
    private final Function<String, Answer> byKey;

    TestUpstream(int status, TestBody body)
    {
        this.byKey = key -> new Answer(status, body);
    }

    /** @param byKey the answer to a request, by the value of its {@code x-goog-api-key} */
    TestUpstream(Function<String, Answer> byKey)
    {
        this.byKey = byKey;
    }

    /** A status and a body to answer with. */
    record Answer(int status, TestBody body)
    {
    }

    @Override
    public CompletionStage<UpstreamResponse> send(UpstreamRequest request, Exchange exchange)
    {
        sent.add(request);
        Answer answer = byKey.apply(header(request, "x-goog-api-key"));
        int status = answer.status();
        TestBody body = answer.body();
        return CompletableFuture.completedFuture(new UpstreamResponse()
        {
            @Override
            public int status()
            {
                return status;
            }

            @Override
            public String header(String name)
            {
                return null;
            }

            @Override
            public BodySource body()
            {
                return body;
            }
        });
    }

    @Override
    public UpstreamOptions options()
    {
        throw new UnsupportedOperationException();
    }

    /** @return the value of header {@code name} in the last request, or {@code null} */
    String header(String name)
    {
        return header(sent.get(sent.size() - 1), name);
    }

    /** @return the value of header {@code name} in {@code request}, or {@code null} */
    static String header(UpstreamRequest request, String name)
    {
        for (Map.Entry<String, String> e : request.headers())
        {
            if (e.getKey().equalsIgnoreCase(name))
                return e.getValue();
        }
        return null;
    }
}
