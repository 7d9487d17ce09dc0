package dev.sluice.plugin.openai;

import dev.sluice.api.testing.TestBody;
import dev.sluice.api.ErrorKind;
import dev.sluice.api.GatewayException;
import dev.sluice.api.exchange.EventStream;
import dev.sluice.api.model.RawFrame;
import dev.sluice.api.model.RetainedFrame;
import dev.sluice.api.model.StreamEvent;
import dev.sluice.api.model.StreamItem;
import dev.sluice.api.model.Usage;
import dev.sluice.support.upstream.UpstreamEventStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

class UpstreamEventStreamTest
{
    private final List<Usage> usages = new ArrayList<>();
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

    @Test
    void rawRelayCopiesEveryByteAndEndsCleanlyAfterDone()
    {
        byte[] sse = Fixtures.bytes("stream-parallel-tools.sse");
        body = TestBody.split(sse, 50);
        EventStream stream = new OpenAiRawStream(body, usages::add);

        List<StreamItem> items = drain(stream);

        ByteArrayOutputStream relayed = new ByteArrayOutputStream();
        items.stream().filter(RawFrame.class::isInstance).forEach(i -> relayed.writeBytes(bytes(((RawFrame)i).bytes())));
        assertThat(relayed.toByteArray()).isEqualTo(sse);
        assertThat(items.get(items.size() - 1)).isSameAs(StreamItem.END);
        assertThat(stream.read()).as("terminal item repeats").isSameAs(StreamItem.END);
        assertThat(usages).containsExactly(new Usage(112, 51, 64, 0, 0));
        assertThat(body.failure()).isNull();
    }

    @Test
    void contentStartsAtTheFirstNonEmptyDeltaNotAtTheRoleChunk()
    {
        body = TestBody.of(
            utf8("data: {\"id\":\"c\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"}}]}\n\n"),
            utf8("data: {\"id\":\"c\",\"choices\":[{\"index\":0,\"delta\":{\"content\": null}}]}\n\n"),
            utf8("data: {\"id\":\"c\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hi\"}}]}\n\n"),
            utf8("data: [DONE]\n\n"));

        assertThat(contentAfterEachFrame(new OpenAiRawStream(body, usages::add))).containsExactly(false, false, true, true);
    }

    @Test
    void aToolCallDeltaIsContent()
    {
        body = TestBody.of(
            utf8("data: {\"id\":\"c\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\"}}]}\n\n"),
            utf8("data: {\"id\":\"c\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"t\","
                + "\"type\":\"function\",\"function\":{\"name\":\"f\",\"arguments\":\"\"}}]}}]}\n\n"),
            utf8("data: [DONE]\n\n"));

        assertThat(contentAfterEachFrame(new OpenAiRawStream(body, usages::add))).containsExactly(false, true, true);
    }

    /** Reads the stream to its end; after each raw frame, whether it said content had started. */
    static List<Boolean> contentAfterEachFrame(EventStream stream)
    {
        List<Boolean> seen = new ArrayList<>();
        for (int guard = 0; guard < 1000; guard++)
        {
            StreamItem item = stream.read();
            if (item == null || item == StreamItem.END || item instanceof StreamEvent.Error)
                return seen;
            if (item instanceof RawFrame)
                seen.add(stream.contentStarted());
        }
        throw new AssertionError("stream did not end");
    }

    @Test
    void anEventSplitAcrossChunksIsRelayedWholeInOneFrame()
    {
        String event = "data: {\"id\":\"c\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hi\"}}]}\n\n";
        body = TestBody.of(utf8(event.substring(0, 20)), utf8(event.substring(20)), utf8("data: [DONE]\n\n"));
        EventStream stream = new OpenAiRawStream(body, usages::add);

        List<StreamItem> items = drain(stream);

        // The first chunk completes no event: nothing goes out until the event is whole.
        assertThat(items).hasSize(3);
        assertThat(((RawFrame)items.get(0)).atBoundary()).isTrue();
        assertThat(StandardCharsets.UTF_8.decode(((RawFrame)items.get(0)).bytes().duplicate()).toString()).isEqualTo(event);
        assertThat(((RawFrame)items.get(1)).atBoundary()).isTrue();
        assertThat(items.get(2)).isEqualTo(StreamItem.END);
    }

    @Test
    void aStreamCutMidEventNeverRelaysTheHalfEvent()
    {
        String whole = "data: {\"id\":\"c\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hi\"}}]}\n\n";
        body = TestBody.of(utf8(whole + whole.substring(0, 25)));
        EventStream stream = new OpenAiRawStream(body, usages::add);

        List<StreamItem> items = drain(stream);

        assertThat(items).hasSize(2);
        assertThat(StandardCharsets.UTF_8.decode(((RawFrame)items.get(0)).bytes().duplicate()).toString()).isEqualTo(whole);
        assertThat(((StreamEvent.Error)items.get(1)).error().getMessage())
            .isEqualTo("upstream stream ended before completion");
    }

    @Test
    void rawRelayCutBeforeDoneEndsWithAnError()
    {
        String sse = new String(Fixtures.bytes("stream-text.sse"), StandardCharsets.UTF_8);
        body = TestBody.split(utf8(sse.substring(0, sse.indexOf("data: [DONE]"))), 100);
        EventStream stream = new OpenAiRawStream(body, usages::add);

        List<StreamItem> items = drain(stream);

        GatewayException error = ((StreamEvent.Error)items.get(items.size() - 1)).error();
        assertThat(error.kind()).isEqualTo(ErrorKind.UPSTREAM_UNAVAILABLE);
        assertThat(error.getMessage()).isEqualTo("upstream stream ended before completion");
    }

    @Test
    void rawRelayWithholdsAnErrorEventAndEndsWithItAsTheTerminalError()
    {
        String content = "data: {\"id\":\"c\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hi\"}}]}\n\n";
        String error = "data: {\"error\":{\"message\":\"Rate limit reached\",\"type\":\"requests\","
            + "\"code\":\"rate_limit_exceeded\"}}\n\n";
        body = TestBody.of(utf8(content + error), utf8("never read"));
        EventStream stream = new OpenAiRawStream(body, usages::add);

        List<StreamItem> items = drain(stream);

        assertThat(items).hasSize(2);
        assertThat(new String(bytes(((RawFrame)items.get(0)).bytes()), StandardCharsets.UTF_8)).isEqualTo(content);
        GatewayException e = ((StreamEvent.Error)items.get(1)).error();
        assertThat(e.kind()).isEqualTo(ErrorKind.RATE_LIMITED);
        assertThat(e.getMessage()).isEqualTo("upstream: Rate limit reached");
        assertThat(body.failure()).as("the upstream is aborted").isNotNull();
    }

    @Test
    void rawRelayErrorEventStartingAChunkEmitsNoFrame()
    {
        body = TestBody.of(utf8("data: {\"error\":{\"message\":\"boom\",\"type\":\"server_error\"}}\n\n"));
        EventStream stream = new OpenAiRawStream(body, usages::add);

        List<StreamItem> items = drain(stream);

        assertThat(items).hasSize(1);
        assertThat(((StreamEvent.Error)items.get(0)).error().getMessage()).isEqualTo("upstream: boom");
    }

    @Test
    void translatedStreamYieldsCanonicalEventsAndRecordsUsage()
    {
        byte[] sse = Fixtures.bytes("stream-parallel-tools.sse");
        body = TestBody.split(sse, 37);
        EventStream stream = new UpstreamEventStream.Translated(body, new OpenAiStreamDecoder(), usages::add);

        List<StreamItem> items = drain(stream);

        assertThat(items.get(items.size() - 1)).isSameAs(StreamItem.END);
        List<StreamEvent> events = new ArrayList<>();
        items.subList(0, items.size() - 1).forEach(i -> events.add((StreamEvent)i));
        assertThat(events).isEqualTo(Fixtures.decodeStream(sse, sse.length, null));
        assertThat(usages).containsExactly(new Usage(112, 51, 64, 0, 0));
    }

    @Test
    void translatedStreamWithGarbageEndsWithUpstreamUnavailableAndAbortsTheUpstream()
    {
        body = TestBody.of(utf8("data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hi\"}}]}\n\ndata: <html>\n\n"),
            utf8("more"));
        EventStream stream = new UpstreamEventStream.Translated(body, new OpenAiStreamDecoder(), usages::add);

        List<StreamItem> items = drain(stream);

        GatewayException e = ((StreamEvent.Error)items.get(items.size() - 1)).error();
        assertThat(e.kind()).isEqualTo(ErrorKind.UPSTREAM_UNAVAILABLE);
        assertThat(e.getMessage()).isEqualTo("upstream sent an invalid stream event");
        assertThat(body.failure()).isNotNull();
    }

    @Test
    void failureChunkBecomesTheTerminalError()
    {
        GatewayException timeout = new GatewayException(ErrorKind.UPSTREAM_TIMEOUT, "upstream idle for 60s");
        body = TestBody.of(utf8("data: {\"choices\":[]}\n\n")).thenFail(timeout);
        List<StreamItem> items = drain(new OpenAiRawStream(body, usages::add));
        assertThat(((StreamEvent.Error)items.get(items.size() - 1)).error()).isSameAs(timeout);

        body.assertAllReleasedOnce();
        body = TestBody.of().thenFail(new IOException("connection reset"));
        items = drain(new OpenAiRawStream(body, usages::add));
        GatewayException wrapped = ((StreamEvent.Error)items.get(0)).error();
        assertThat(wrapped.kind()).isEqualTo(ErrorKind.UPSTREAM_UNAVAILABLE);
        assertThat(wrapped.getMessage()).isEqualTo("upstream stream failed");
    }

    @Test
    void connectionDroppedAfterDoneIsACleanEnd()
    {
        body = TestBody.of(utf8("data: [DONE]\n\n")).thenFail(new IOException("reset"));
        List<StreamItem> items = drain(new OpenAiRawStream(body, usages::add));
        assertThat(items.get(items.size() - 1)).isSameAs(StreamItem.END);
    }

    @Test
    void readsNothingAheadOfTheConsumer()
    {
        body = TestBody.of(utf8("data: {\"choices\":[]}\n\n"), utf8("data: [DONE]\n\n"));
        body.hold();
        EventStream stream = new OpenAiRawStream(body, usages::add);

        assertThat(stream.read()).isNull();
        boolean[] called = new boolean[1];
        stream.demand(() -> called[0] = true);
        assertThat(called[0]).as("demand waits for the upstream").isFalse();

        body.arrive();
        assertThat(called[0]).isTrue();
        assertThat(stream.read()).isInstanceOf(RawFrame.class);
        assertThat(body.reads()).as("one upstream read per item consumed").isEqualTo(1);
        assertThat(stream.read()).isNull();

        body.arrive();
        assertThat(stream.read()).isInstanceOf(RawFrame.class);
        assertThat(stream.read()).isSameAs(StreamItem.END);
    }

    @Test
    void cancelAbortsTheUpstream()
    {
        body = TestBody.of(utf8("data: {\"choices\":[]}\n\n"), utf8("data: [DONE]\n\n"));
        EventStream stream = new OpenAiRawStream(body, usages::add);
        assertThat(stream.read()).isInstanceOf(RawFrame.class);

        IOException gone = new IOException("client went away");
        stream.cancel(gone);
        stream.cancel(gone);

        assertThat(body.failure()).isSameAs(gone);
        assertThat(body.failCalls()).isEqualTo(1);
        assertThat(stream.read()).isInstanceOf(StreamEvent.Error.class);
    }

    @Test
    void aChunkOfWholeEventsIsLentAsItsOwnBufferAndReleasedOnceAfterTheWrite()
    {
        String first = "data: {\"id\":\"c\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hi\"}}]}\n\n";
        String second = "data: {\"id\":\"c\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\" there\"}}]}\n\n"
            + "data: [DONE]\n\n";
        body = TestBody.of(utf8(first), utf8(second));
        EventStream stream = new OpenAiRawStream(body, usages::add);
        assertThat(stream.acceptRetainedFrames()).isTrue();

        RetainedFrame frame = (RetainedFrame)stream.read();
        assertThat(frame.bytes()).as("the chunk's own buffer, not a copy").isSameAs(body.buffer(0));
        assertThat(frame.atBoundary()).isTrue();
        assertThat(body.unreleased()).as("held until the write completes").isEqualTo(1);
        // The write consumes the buffer; only then does the consumer release it.
        assertThat(new String(bytes(frame.bytes()), StandardCharsets.UTF_8)).isEqualTo(first);
        frame.bytes().position(frame.bytes().limit());
        frame.release();
        assertThat(body.unreleased()).isZero();

        RetainedFrame last = (RetainedFrame)stream.read();
        assertThat(last.bytes()).isSameAs(body.buffer(1));
        last.release();
        assertThat(stream.read()).isSameAs(StreamItem.END);
        assertThat(body.reads()).isEqualTo(2);
    }

    @Test
    void aChunkEndingMidEventLendsItsWholeEventsAndHoldsTheRestBackUntilComplete()
    {
        String first = "data: {\"id\":\"c\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hi\"}}]}\n\n";
        String split = "data: {\"id\":\"c\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\" there\"}}]}\n\n";
        String done = "data: [DONE]\n\n";
        body = TestBody.of(utf8(first + split.substring(0, 30)), utf8(split.substring(30, 50)), utf8(split.substring(50) + done));
        EventStream stream = new OpenAiRawStream(body, usages::add);
        stream.acceptRetainedFrames();

        List<StreamItem> items = drainReleasing(stream);

        assertThat(items).hasSize(3);
        assertThat(items.get(0)).isInstanceOf(RetainedFrame.class);
        assertThat(text(items.get(0))).isEqualTo(first);
        // The carried event and the whole events after it go out together, in a copy: the chunk is released by read.
        assertThat(items.get(1)).isInstanceOf(RawFrame.class);
        assertThat(text(items.get(1))).isEqualTo(split + done);
        assertThat(items.get(2)).isSameAs(StreamItem.END);
    }

    @Test
    void lentFramesCarryEveryByteOfTheStreamWhateverTheChunking()
    {
        byte[] sse = Fixtures.bytes("stream-parallel-tools.sse");
        for (int size : new int[]{7, 50, 4096})
        {
            body = TestBody.split(sse, size);
            usages.clear();
            EventStream stream = new OpenAiRawStream(body, usages::add);
            stream.acceptRetainedFrames();

            List<StreamItem> items = drainReleasing(stream);

            ByteArrayOutputStream relayed = new ByteArrayOutputStream();
            items.stream().filter(i -> !(i instanceof StreamItem.End)).forEach(i -> relayed.writeBytes(utf8(text(i))));
            assertThat(relayed.toByteArray()).as("chunks of %d bytes", size).isEqualTo(sse);
            assertThat(items.get(items.size() - 1)).isSameAs(StreamItem.END);
            assertThat(usages).containsExactly(new Usage(112, 51, 64, 0, 0));
            body.assertAllReleasedOnce();
        }
    }

    @Test
    void anErrorEventAfterWholeEventsEndsTheStreamAfterTheLentFrame()
    {
        String content = "data: {\"id\":\"c\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hi\"}}]}\n\n";
        String error = "data: {\"error\":{\"message\":\"Rate limit reached\",\"type\":\"requests\","
            + "\"code\":\"rate_limit_exceeded\"}}\n\n";
        body = TestBody.of(utf8(content + error), utf8("never read"));
        EventStream stream = new OpenAiRawStream(body, usages::add);
        stream.acceptRetainedFrames();

        List<StreamItem> items = drainReleasing(stream);

        assertThat(items).hasSize(2);
        assertThat(items.get(0)).isInstanceOf(RetainedFrame.class);
        assertThat(text(items.get(0))).isEqualTo(content);
        assertThat(((StreamEvent.Error)items.get(1)).error().kind()).isEqualTo(ErrorKind.RATE_LIMITED);
        assertThat(body.failure()).as("the upstream is aborted").isNotNull();
    }

    @Test
    void aLentFrameStaysTheConsumersToReleaseAfterItCancels()
    {
        body = TestBody.of(utf8("data: {\"choices\":[]}\n\n"), utf8("data: [DONE]\n\n"));
        EventStream stream = new OpenAiRawStream(body, usages::add);
        stream.acceptRetainedFrames();
        RetainedFrame frame = (RetainedFrame)stream.read();

        // The client went away while the frame was being written: the write fails, then the consumer cancels.
        IOException gone = new IOException("client went away");
        stream.cancel(gone);
        assertThat(body.unreleased()).as("cancel leaves the lent chunk alone").isEqualTo(1);
        frame.release();

        assertThat(body.failure()).isSameAs(gone);
        assertThat(stream.read()).isInstanceOf(StreamEvent.Error.class);
        assertThat(body.reads()).isEqualTo(1);
    }

    @Test
    void aStreamNotOfferedRetainedFramesCopiesAndReleasesBeforeReadReturns()
    {
        body = TestBody.of(utf8("data: {\"choices\":[]}\n\n"), utf8("data: [DONE]\n\n"));
        EventStream stream = new OpenAiRawStream(body, usages::add);

        StreamItem item = stream.read();

        assertThat(item).isInstanceOf(RawFrame.class);
        assertThat(((RawFrame)item).bytes()).isNotSameAs(body.buffer(0));
        assertThat(body.unreleased()).isZero();
    }

    /** Like {@link #drain}, as a consumer that accepted retained frames: each one "written" (read whole), then released. */
    private static List<StreamItem> drainReleasing(EventStream stream)
    {
        List<StreamItem> items = new ArrayList<>();
        for (int guard = 0; guard < 100_000; guard++)
        {
            StreamItem item = stream.read();
            if (item == null)
                throw new AssertionError("stream stalled");
            if (item instanceof RetainedFrame frame)
            {
                // Keep a copy to assert on: the buffer is not ours after the release.
                items.add(new RetainedFrame(ByteBuffer.wrap(bytes(frame.bytes())), frame.atBoundary(), () -> { }));
                frame.release();
                continue;
            }
            items.add(item);
            if (item == StreamItem.END || item instanceof StreamEvent.Error)
                return items;
        }
        throw new AssertionError("stream did not end");
    }

    private static String text(StreamItem item)
    {
        ByteBuffer bytes = item instanceof RetainedFrame r ? r.bytes() : ((RawFrame)item).bytes();
        return new String(bytes(bytes), StandardCharsets.UTF_8);
    }

    /** Reads until a terminal item, demanding when nothing is available (the stand-in makes everything available). */
    private static List<StreamItem> drain(EventStream stream)
    {
        List<StreamItem> items = new ArrayList<>();
        for (int guard = 0; guard < 100_000; guard++)
        {
            StreamItem item = stream.read();
            if (item == null)
                throw new AssertionError("stream stalled");
            items.add(item);
            if (item == StreamItem.END || item instanceof StreamEvent.Error)
                return items;
        }
        throw new AssertionError("stream did not end");
    }

    private static byte[] bytes(ByteBuffer buffer)
    {
        byte[] bytes = new byte[buffer.remaining()];
        buffer.duplicate().get(bytes);
        return bytes;
    }

    /** A provider's response body, chunk by chunk, that counts releases. */
}
