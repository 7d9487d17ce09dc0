package dev.sluice.support.codec;

import java.util.function.Consumer;

import dev.sluice.api.exchange.EventStream;
import dev.sluice.api.model.ChatResponse;
import dev.sluice.api.model.StreamEvent;
import dev.sluice.api.model.StreamItem;

/**
 * A missed streamed answer relayed to the client as it comes, while a {@link StreamRecorder} rebuilds it; at its normal
 * end the whole answer is handed to {@code onEnd}, after any other end ({@code null}: an error event, a cancel, an item
 * the recorder cannot read) {@code onEnd} gets {@code null}. {@code onEnd} is called at most once; the relay itself adds
 * no wait: each item is recorded as the consumer reads it.
 *
 * <p>It does not take {@link dev.sluice.api.model.RetainedFrame}s (the default): the cache asks for a canonical answer,
 * whose items are events.
 */
public final class RecordingStream implements EventStream
{
    private final EventStream inner;
    private final StreamRecorder recorder;
    private final Consumer<ChatResponse> onEnd;
    // Set once, by the end or a cancel (which may come from another thread).
    private final java.util.concurrent.atomic.AtomicBoolean ended = new java.util.concurrent.atomic.AtomicBoolean();

    public RecordingStream(EventStream inner, long maxChars, Consumer<ChatResponse> onEnd)
    {
        this.inner = inner;
        this.recorder = new StreamRecorder(maxChars);
        this.onEnd = onEnd;
    }

    @Override
    public StreamItem read()
    {
        StreamItem item = inner.read();
        if (item == null || ended.get())
            return item;
        if (item == StreamItem.END)
            end(recorder.answer());
        else if (item instanceof StreamEvent.Error)
            end(null);
        else if (item instanceof StreamEvent event)
            recorder.add(event);
        else
            recorder.broken();
        return item;
    }

    @Override
    public void demand(Runnable onAvailable)
    {
        inner.demand(onAvailable);
    }

    @Override
    public void cancel(Throwable cause)
    {
        try
        {
            inner.cancel(cause);
        }
        finally
        {
            end(null);
        }
    }

    private void end(ChatResponse answer)
    {
        if (ended.compareAndSet(false, true))
            onEnd.accept(answer);
    }
}
