package dev.sluice.support.upstream;

import dev.sluice.api.upstream.BodySource;
import dev.sluice.api.model.RawFrame;
import dev.sluice.api.model.RetainedFrame;
import dev.sluice.api.model.StreamEvent;
import dev.sluice.api.model.StreamItem;
import dev.sluice.api.testing.TestBody;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.function.Consumer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** {@link UpstreamEventStream#relay}'s rules: when a chunk is lent, and when it is copied instead. */
class UpstreamEventStreamRelayTest
{
    private TestBody body;

    @AfterEach
    void everyChunkReleasedExactlyOnce()
    {
        if (body != null)
            body.assertAllReleasedOnce();
    }

    private static byte[] utf8(String s)
    {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static String text(ByteBuffer buffer)
    {
        return StandardCharsets.UTF_8.decode(buffer.duplicate()).toString();
    }

    /** Relays each chunk up to its last '\n' with {@code onData}'s rule, and ends on a chunk that is last. */
    private static final class Lines extends UpstreamEventStream
    {
        private final Consumer<Lines> before;

        Lines(BodySource body, Consumer<Lines> before)
        {
            super(body, usage -> { });
            this.before = before;
        }

        @Override
        protected void onData(ByteBuffer data)
        {
            before.accept(this);
            int end = data.limit();
            while (end > data.position() && data.get(end - 1) != '\n')
                end--;
            relay(data, data.position(), end, true);
            relay(data, end, data.limit(), false);
        }

        void emitNow(StreamItem item)
        {
            emit(item);
        }

        @Override
        protected boolean complete()
        {
            return true;
        }
    }

    @Test
    void theFirstItemOfAChunkIsLentAndAnySecondOneIsCopied()
    {
        body = TestBody.of(utf8("a\nb\ntail"), utf8("c\n"));
        Lines stream = new Lines(body, s -> { });
        stream.acceptRetainedFrames();

        RetainedFrame lent = (RetainedFrame)stream.read();
        assertThat(text(lent.bytes())).isEqualTo("a\nb\n");
        assertThat(lent.bytes()).as("a slice: the chunk goes on past it").isNotSameAs(body.buffer(0));
        RawFrame copied = (RawFrame)stream.read();
        assertThat(text(copied.bytes())).isEqualTo("tail");
        assertThat(copied.atBoundary()).isFalse();
        assertThat(body.unreleased()).isEqualTo(1);
        lent.release();

        RetainedFrame whole = (RetainedFrame)stream.read();
        assertThat(whole.bytes()).as("the whole chunk: its own buffer").isSameAs(body.buffer(1));
        whole.release();
        assertThat(stream.read()).isSameAs(StreamItem.END);
    }

    @Test
    void aChunkIsNotLentBehindAnItemQueuedBeforeIt()
    {
        body = TestBody.of(utf8("a\n"));
        Lines stream = new Lines(body, s -> s.emitNow(new StreamEvent.BlockStop(0)));
        stream.acceptRetainedFrames();

        assertThat(stream.read()).isInstanceOf(StreamEvent.BlockStop.class);
        assertThat(body.unreleased()).as("copied, so released before read returned").isZero();
        assertThat(stream.read()).isInstanceOf(RawFrame.class);
        assertThat(stream.read()).isSameAs(StreamItem.END);
    }

    @Test
    void aBufferOtherThanTheChunksIsCopied()
    {
        body = TestBody.of(utf8("a\n"));
        UpstreamEventStream stream = new UpstreamEventStream(body, usage -> { })
        {
            @Override
            protected void onData(ByteBuffer data)
            {
                ByteBuffer own = ByteBuffer.wrap(utf8("x\n"));
                relay(own, 0, own.limit(), true);
            }

            @Override
            protected boolean complete()
            {
                return true;
            }
        };
        stream.acceptRetainedFrames();

        assertThat(text(((RawFrame)stream.read()).bytes())).isEqualTo("x\n");
        assertThat(stream.read()).isSameAs(StreamItem.END);
    }

    @Test
    void relayChecksItsRange()
    {
        body = TestBody.of(utf8("a\n"));
        UpstreamEventStream stream = new UpstreamEventStream(body, usage -> { })
        {
            @Override
            protected void onData(ByteBuffer data)
            {
                relay(data, data.position(), data.limit() + 1, true);
            }

            @Override
            protected boolean complete()
            {
                return true;
            }
        };

        assertThatThrownBy(stream::read).isInstanceOf(IndexOutOfBoundsException.class);
    }
}
