package dev.sluice.api.exchange;

import dev.sluice.api.model.ChatResponse;
import dev.sluice.api.model.Usage;

import java.util.Objects;

/**
 * What a stage answers: raw bytes already in the client's dialect, a canonical response the server binding
 * encodes, or a stream. Failures are not replies: a stage completes exceptionally with a
 * {@link dev.sluice.api.GatewayException}.
 */
public sealed interface Reply permits Reply.Bytes, Reply.Message, Reply.Stream
{
    /**
     * A complete body in the client's wire format (the same-dialect fast path).
     *
     * @param usage usage scanned from the body, or {@code null} if unknown
     */
    record Bytes(int status, String contentType, byte[] body, Usage usage) implements Reply
    {
        public Bytes
        {
            Objects.requireNonNull(contentType, "contentType");
            Objects.requireNonNull(body, "body");
        }
    }

    /** A canonical answer; the server binding encodes it in the client's dialect. */
    record Message(ChatResponse response) implements Reply
    {
        public Message
        {
            Objects.requireNonNull(response, "response");
        }
    }

    /**
     * A streamed answer; raw frames in it are in the client's dialect, canonical events are encoded by the server
     * binding.
     */
    record Stream(EventStream events) implements Reply
    {
        public Stream
        {
            Objects.requireNonNull(events, "events");
        }
    }
}
