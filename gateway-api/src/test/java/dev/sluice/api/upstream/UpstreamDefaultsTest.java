package dev.sluice.api.upstream;

import dev.sluice.api.exchange.Exchange;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** What an {@link Upstream} that predates {@link Upstream#send(UpstreamRequest)} (a test double) does with it. */
class UpstreamDefaultsTest
{
    @Test
    void aSendOutsideAnExchangeIsRefusedWithAFailedStageNotAThrow()
    {
        Upstream old = new Upstream()
        {
            @Override
            public CompletionStage<UpstreamResponse> send(UpstreamRequest request, Exchange exchange)
            {
                throw new AssertionError("not on behalf of an exchange");
            }

            @Override
            public UpstreamOptions options()
            {
                return null;
            }
        };
        CompletionStage<UpstreamResponse> stage = old.send(new UpstreamRequest("POST", "/v1/traces", List.of(), new byte[0],
            "application/x-protobuf"));
        assertThatThrownBy(() -> stage.toCompletableFuture().get())
            .isInstanceOf(ExecutionException.class)
            .hasCauseInstanceOf(UnsupportedOperationException.class)
            .hasMessageContaining("this upstream sends only on behalf of an exchange");
    }
}
