package dev.sluice.api.codec;

import dev.sluice.api.GatewayException;
import dev.sluice.api.model.StreamEvent;

import java.nio.ByteBuffer;

/**
 * Turns canonical events into a dialect's streamed wire format. Stateful: one instance per stream.
 * A returned buffer may be empty when an event has no wire form in the dialect.
 *
 * <pre>{@code
 * StreamEncoder encoder = codec.newStreamEncoder(exchange::request);
 * write(encoder.encode(new StreamEvent.TextDelta(0, "Hel")));
 * write(item == StreamItem.END ? encoder.end() : encoder.error(failure));
 * }</pre>
 */
public interface StreamEncoder
{
    /** @return the wire bytes for {@code event} */
    ByteBuffer encode(StreamEvent event);

    /** @return the bytes that end a clean stream (e.g. {@code data: [DONE]}) */
    ByteBuffer end();

    /** @return the bytes of an in-stream error event for {@code error} */
    ByteBuffer error(GatewayException error);

    /** @return the {@code Content-Type} of the stream */
    String contentType();

    /**
     * @return the bytes that close an event a raw relay left half-written, so that an error event written after it
     *         parses on its own: SSE a blank line (the default), NDJSON a newline
     */
    default ByteBuffer eventBoundary()
    {
        return ByteBuffer.wrap(new byte[] {'\n', '\n'});
    }
}
