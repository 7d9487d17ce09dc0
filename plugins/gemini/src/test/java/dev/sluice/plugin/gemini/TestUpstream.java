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

/** The runtime's HTTP client reduced to a recorder that answers every request with one canned response. */
final class TestUpstream implements Upstream
{
    final List<UpstreamRequest> sent = new ArrayList<>();
    private final int status;
    private final TestBody body;

    TestUpstream(int status, TestBody body)
    {
        this.status = status;
        this.body = body;
    }

    @Override
    public CompletionStage<UpstreamResponse> send(UpstreamRequest request, Exchange exchange)
    {
        sent.add(request);
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
        for (Map.Entry<String, String> e : sent.get(sent.size() - 1).headers())
        {
            if (e.getKey().equalsIgnoreCase(name))
                return e.getValue();
        }
        return null;
    }
}
