package dev.sluice.api.exchange;

import dev.sluice.api.model.ChatResponse;
import dev.sluice.api.model.Usage;

import java.util.Objects;

/**
 * What a stage answers: raw bytes already in the client's dialect, a canonical response the server binding
 * encodes, or a stream. Failures are not replies: a stage completes exceptionally with a
 * {@link dev.sluice.api.GatewayException}.
 *
 * <p>Every variant carries {@link ResponseHeaders} for the client (rate limits, a cache's {@code x-cache}…), never
 * {@code null} ({@link ResponseHeaders#EMPTY} when there are none; a {@code null} given to a constructor becomes
 * that). The runtime writes them with the status, before the body or at the start of a stream; see
 * {@link ResponseHeaders} for the names it refuses and overrides. The constructors without headers are kept for
 * plugins written before headers existed.
 *
 * <pre>{@code
 * return next.handle(exchange).thenApply(reply -> reply.withHeaders(reply.headers().with("x-cache", "MISS")));
 * }</pre>
 */
public sealed interface Reply permits Reply.Bytes, Reply.Message, Reply.Stream
{
    /** @return the headers the client gets with this reply; never {@code null} */
    ResponseHeaders headers();

    /** @return this reply with {@code headers} in place of its own ({@code null}: none) */
    Reply withHeaders(ResponseHeaders headers);

    /**
     * A complete body in the client's wire format (the same-dialect fast path).
     *
     * @param usage   usage scanned from the body, or {@code null} if unknown
     * @param headers headers for the client; {@code null} means none
     */
    record Bytes(int status, String contentType, byte[] body, Usage usage, ResponseHeaders headers) implements Reply
    {
        public Bytes
        {
            Objects.requireNonNull(contentType, "contentType");
            Objects.requireNonNull(body, "body");
            if (headers == null)
                headers = ResponseHeaders.EMPTY;
        }

        /** Without headers. */
        public Bytes(int status, String contentType, byte[] body, Usage usage)
        {
            this(status, contentType, body, usage, ResponseHeaders.EMPTY);
        }

        @Override
        public Bytes withHeaders(ResponseHeaders headers)
        {
            return new Bytes(status, contentType, body, usage, headers);
        }
    }

    /**
     * A canonical answer; the server binding encodes it in the client's dialect.
     *
     * @param headers headers for the client; {@code null} means none
     */
    record Message(ChatResponse response, ResponseHeaders headers) implements Reply
    {
        public Message
        {
            Objects.requireNonNull(response, "response");
            if (headers == null)
                headers = ResponseHeaders.EMPTY;
        }

        /** Without headers. */
        public Message(ChatResponse response)
        {
            this(response, ResponseHeaders.EMPTY);
        }

        @Override
        public Message withHeaders(ResponseHeaders headers)
        {
            return new Message(response, headers);
        }
    }

    /**
     * A streamed answer; raw frames in it are in the client's dialect, canonical events are encoded by the server
     * binding. Its headers are written when the stream starts, before the first event.
     *
     * @param headers headers for the client; {@code null} means none
     */
    record Stream(EventStream events, ResponseHeaders headers) implements Reply
    {
        public Stream
        {
            Objects.requireNonNull(events, "events");
            if (headers == null)
                headers = ResponseHeaders.EMPTY;
        }

        /** Without headers. */
        public Stream(EventStream events)
        {
            this(events, ResponseHeaders.EMPTY);
        }

        @Override
        public Stream withHeaders(ResponseHeaders headers)
        {
            return new Stream(events, headers);
        }
    }
}
