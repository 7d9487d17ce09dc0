package dev.sluice.api.codec;

import dev.sluice.api.model.StreamEvent;

import java.nio.ByteBuffer;
import java.util.function.Consumer;

/**
 * Turns a provider's streamed body, chunk by chunk as it arrives, into canonical events. Stateful: one instance
 * per stream, used by one thread at a time. Chunks may split events anywhere.
 *
 * <pre>{@code
 * StreamDecoder decoder = codec.newStreamDecoder();
 * decoder.decode(chunk, event -> pending.add(event));        // zero, one or several events per chunk
 * if (lastChunk && !decoder.complete()) fail("the stream ended before its end event");
 * }</pre>
 */
public interface StreamDecoder
{
    /**
     * Decodes what {@code chunk} completes and passes each event to {@code sink}, in order.
     *
     * @throws dev.sluice.api.GatewayException {@code UPSTREAM_UNAVAILABLE} if the bytes are not a valid stream
     */
    void decode(ByteBuffer chunk, Consumer<StreamEvent> sink);

    /** @return whether the provider's explicit end of stream (e.g. {@code [DONE]}, {@code message_stop}) was seen */
    boolean complete();
}
