package dev.sluice.plugin.openai.responses;

import dev.sluice.api.GatewayException;

/**
 * A provider's failure that ends a relayed (same-dialect) Responses stream, with how many of the provider's events
 * went to the client before it. The client's {@link ResponsesStreamEncoder} saw none of them, and numbers its
 * {@code error} event after them: a client reads {@code sequence_number}s that only go up.
 */
final class RelayedStreamFailure extends GatewayException
{
    private static final long serialVersionUID = 1L;

    private final long nextSequence;

    /**
     * @param failure      the provider's failure, as the client is to see it
     * @param nextSequence the events relayed before it, which OpenAI numbers from 0: the next {@code sequence_number}
     */
    RelayedStreamFailure(GatewayException failure, long nextSequence)
    {
        super(failure.kind(), failure.status(), failure.getMessage(), failure.param(), failure.code(), failure.getCause(),
            failure.headers());
        this.nextSequence = nextSequence;
    }

    /** @return the {@code sequence_number} of the event that reports this failure */
    long nextSequence()
    {
        return nextSequence;
    }
}
