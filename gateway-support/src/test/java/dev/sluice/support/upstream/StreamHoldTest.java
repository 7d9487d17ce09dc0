package dev.sluice.support.upstream;

import dev.sluice.api.ErrorKind;
import dev.sluice.api.GatewayException;
import dev.sluice.api.exchange.EventStream;
import dev.sluice.api.exchange.Reply;
import dev.sluice.api.exchange.ResponseHeaders;
import dev.sluice.api.model.RawFrame;
import dev.sluice.api.model.RetainedFrame;
import dev.sluice.api.model.StreamEvent;
import dev.sluice.api.model.StreamItem;
import dev.sluice.api.model.ChatResponse.StopReason;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

class StreamHoldTest
{
    private static final StreamEvent START = new StreamEvent.MessageStart("m", "model", 0, null);

    @Test
    void lifecycleEventsAreHeldUntilTheFirstContentThenReplayedInOrder()
    {
        ScriptedStream inner = new ScriptedStream(false, START, new StreamEvent.TextStart(0),
            new StreamEvent.TextDelta(0, ""), new StreamEvent.TextDelta(0, "Hi"), new StreamEvent.BlockStop(0),
            StreamItem.END);
        inner.pauseAfter(3);
        CompletableFuture<Reply.Stream> held = hold(inner, 64, 1 << 20);

        assertThat(held).as("an empty delta is no content").isNotDone();
        inner.resume();

        assertThat(held).isCompleted();
        assertThat(held.join().headers().get("x-test")).isEqualTo("kept");
        assertThat(drain(held.join().events())).containsExactly(START, new StreamEvent.TextStart(0),
            new StreamEvent.TextDelta(0, ""), new StreamEvent.TextDelta(0, "Hi"), new StreamEvent.BlockStop(0),
            StreamItem.END);
    }

    @Test
    void aToolCallIsContent()
    {
        ScriptedStream inner = new ScriptedStream(false, START, new StreamEvent.ToolCallStart(0, 0, "call_1", "get_time"));
        inner.pauseAfter(2);

        assertThat(hold(inner, 64, 1 << 20)).isCompleted();
    }

    @Test
    void anErrorBeforeContentFailsTheHoldCancelsTheStreamAndReleasesWhatItHeld()
    {
        GatewayException cut = new GatewayException(ErrorKind.UPSTREAM_UNAVAILABLE, "upstream stream ended before completion");
        AtomicInteger released = new AtomicInteger();
        ScriptedStream inner = new ScriptedStream(true, retained("data: {}\n\n", released), new StreamEvent.Error(cut));
        inner.contentStarted = false;

        CompletableFuture<Reply.Stream> held = hold(inner, 64, 1 << 20);

        assertThat(held).isCompletedExceptionally();
        assertThat(held.handle((r, f) -> f).join()).isSameAs(cut);
        assertThat(released).hasValue(1);
        assertThat(inner.cancelled).isTrue();
    }

    @Test
    void anErrorAfterContentIsTheCommittedStreamsOwn()
    {
        GatewayException cut = new GatewayException(ErrorKind.UPSTREAM_UNAVAILABLE, "cut");
        ScriptedStream inner = new ScriptedStream(false, START, new StreamEvent.TextDelta(0, "Hi"), new StreamEvent.Error(cut));

        CompletableFuture<Reply.Stream> held = hold(inner, 64, 1 << 20);

        assertThat(held).isCompleted();
        assertThat(drain(held.join().events())).last().isEqualTo(new StreamEvent.Error(cut));
    }

    @Test
    void theItemLimitCommitsAStreamThatNeverStartsContent()
    {
        ScriptedStream inner = new ScriptedStream(false, START, new StreamEvent.TextStart(0), new StreamEvent.BlockStop(0),
            new StreamEvent.Stop(StopReason.END_TURN, null, null));
        inner.pauseAfter(3);

        assertThat(hold(inner, 3, 1 << 20)).isCompleted();
    }

    @Test
    void theByteLimitCommitsRawFramesThatCarryNoContent()
    {
        ScriptedStream inner = new ScriptedStream(false, raw("x".repeat(100)), raw("y".repeat(100)), raw("z"));
        inner.contentStarted = false;
        inner.pauseAfter(2);

        assertThat(hold(inner, 64, 150)).isCompleted();
    }

    @Test
    void rawFramesCommitWhenTheStreamSaysContentStarted()
    {
        ScriptedStream inner = new ScriptedStream(false, raw("role"), raw("content"), StreamItem.END);
        inner.contentStarted = false;
        inner.pauseAfter(1);
        CompletableFuture<Reply.Stream> held = hold(inner, 64, 1 << 20);
        assertThat(held).isNotDone();

        inner.contentStarted = true;
        inner.resume();

        assertThat(held).isCompleted();
        assertThat(drain(held.join().events())).hasSize(3);
    }

    @Test
    void aCleanEndBeforeContentCommitsAnEmptyAnswer()
    {
        ScriptedStream inner = new ScriptedStream(false, START, StreamItem.END);

        CompletableFuture<Reply.Stream> held = hold(inner, 64, 1 << 20);

        assertThat(drain(held.join().events())).containsExactly(START, StreamItem.END);
    }

    @Test
    void retainedFramesAreLentToAConsumerThatAcceptsThemAndCopiedForOneThatDoesNot()
    {
        AtomicInteger released = new AtomicInteger();
        ScriptedStream inner = new ScriptedStream(true, retained("a", released), StreamItem.END);
        EventStream lending = hold(inner, 64, 1 << 20).join().events();
        assertThat(lending.acceptRetainedFrames()).isTrue();
        StreamItem first = lending.read();
        assertThat(first).isInstanceOf(RetainedFrame.class);
        ((RetainedFrame)first).release();

        ScriptedStream other = new ScriptedStream(true, retained("b", released), StreamItem.END);
        EventStream copying = hold(other, 64, 1 << 20).join().events();
        StreamItem copy = copying.read();
        assertThat(copy).isInstanceOf(RawFrame.class);
        assertThat(StandardCharsets.UTF_8.decode(((RawFrame)copy).bytes()).toString()).isEqualTo("b");
        assertThat(released).as("both buffers went back to their producer once").hasValue(2);
    }

    @Test
    void cancellingACommittedStreamReleasesWhatItStillHolds()
    {
        AtomicInteger released = new AtomicInteger();
        ScriptedStream inner = new ScriptedStream(true, retained("a", released), retained("b", released));
        inner.contentStarted = true;
        EventStream events = hold(inner, 64, 1 << 20).join().events();

        events.cancel(new IllegalStateException("client gone"));

        assertThat(released).as("the held frame by the hold, the unread one by the stream").hasValue(2);
        assertThat(inner.cancelled).isTrue();
    }

    private static CompletableFuture<Reply.Stream> hold(ScriptedStream inner, int items, long bytes)
    {
        return StreamHold.hold(new Reply.Stream(inner, ResponseHeaders.of("x-test", "kept")), items, bytes)
            .toCompletableFuture();
    }

    private static RawFrame raw(String text)
    {
        return new RawFrame(ByteBuffer.wrap(text.getBytes(StandardCharsets.UTF_8)), true);
    }

    private static RetainedFrame retained(String text, AtomicInteger released)
    {
        return new RetainedFrame(ByteBuffer.wrap(text.getBytes(StandardCharsets.UTF_8)), true, released::incrementAndGet);
    }

    private static List<StreamItem> drain(EventStream stream)
    {
        List<StreamItem> items = new ArrayList<>();
        StreamItem item;
        while ((item = stream.read()) != null)
        {
            items.add(item);
            if (item == StreamItem.END || item instanceof StreamEvent.Error)
                break;
        }
        return items;
    }

    /** A stream of fixed items that can pause, so a test sees the hold waiting; terminal items repeat. */
    private static final class ScriptedStream implements EventStream
    {
        private final Deque<StreamItem> items;
        private final boolean lends;
        private int pauseAfter = Integer.MAX_VALUE;
        private int read;
        private Runnable waiting;
        private StreamItem terminal;
        volatile boolean contentStarted = true;
        boolean cancelled;

        ScriptedStream(boolean lends, StreamItem... items)
        {
            this.lends = lends;
            this.items = new ArrayDeque<>(List.of(items));
        }

        void pauseAfter(int n)
        {
            pauseAfter = n;
        }

        void resume()
        {
            pauseAfter = Integer.MAX_VALUE;
            Runnable r = waiting;
            waiting = null;
            if (r != null)
                r.run();
        }

        @Override
        public StreamItem read()
        {
            if (terminal != null)
                return terminal;
            if (read >= pauseAfter || items.isEmpty())
                return null;
            read++;
            StreamItem item = items.pollFirst();
            if (item == StreamItem.END || item instanceof StreamEvent.Error)
                terminal = item;
            return item;
        }

        @Override
        public void demand(Runnable onAvailable)
        {
            if (read < pauseAfter && !items.isEmpty())
                onAvailable.run();
            else
                waiting = onAvailable;
        }

        @Override
        public void cancel(Throwable cause)
        {
            cancelled = true;
            StreamItem item;
            while ((item = items.pollFirst()) != null)
            {
                if (item instanceof RetainedFrame frame)
                    frame.release();
            }
        }

        @Override
        public boolean acceptRetainedFrames()
        {
            return lends;
        }

        @Override
        public boolean contentStarted()
        {
            return contentStarted;
        }
    }
}
