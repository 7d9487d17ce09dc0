package dev.sluice.plugin.gemini;

import dev.sluice.api.testing.TestBody;
import dev.sluice.api.ErrorKind;
import dev.sluice.api.GatewayException;
import dev.sluice.api.model.RawFrame;
import dev.sluice.api.model.RetainedFrame;
import dev.sluice.api.model.StreamEvent;
import dev.sluice.api.model.StreamItem;
import dev.sluice.api.model.Usage;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

class GeminiRawStreamTest
{
    private final List<Usage> usages = new ArrayList<>();
    private TestBody body;

    @AfterEach
    void everyChunkReleasedExactlyOnce()
    {
        if (body != null)
            body.assertAllReleasedOnce();
    }

    private static String data(String chunk)
    {
        return "data: " + chunk + "\r\n\r\n";
    }

    private List<StreamItem> drain()
    {
        return GeminiClientTest.drain(new GeminiRawStream(body, usages::add));
    }

    @Test
    void contentStartsAtTheFirstPartWithTextOrAFunctionCall()
    {
        body = TestBody.of(
            Fixtures.utf8("data: {\"candidates\":[{\"content\":{\"role\":\"model\",\"parts\":[{\"text\":\"\"}]}}]}\r\n\r\n"),
            Fixtures.utf8("data: {\"candidates\":[{\"content\":{\"role\":\"model\",\"parts\":[{\"text\": \"Hi\"}]}}]}\r\n\r\n"));
        GeminiRawStream stream = new GeminiRawStream(body, usages::add);
        assertThat(stream.read()).isInstanceOf(RawFrame.class);
        assertThat(stream.contentStarted()).as("an empty part").isFalse();
        assertThat(stream.read()).isInstanceOf(RawFrame.class);
        assertThat(stream.contentStarted()).isTrue();

        TestBody calls = TestBody.of(Fixtures.utf8("data: {\"candidates\":[{\"content\":{\"parts\":[{\"functionCall\":"
            + "{\"name\":\"f\",\"args\":{}}}]}}]}\r\n\r\n"));
        GeminiRawStream call = new GeminiRawStream(calls, usages::add);
        assertThat(call.read()).isInstanceOf(RawFrame.class);
        assertThat(call.contentStarted()).isTrue();
        call.cancel(new IllegalStateException("done"));
        stream.cancel(new IllegalStateException("done"));
    }

    @Test
    void relaysEveryByteAndEndsCleanlyAfterTheFinishChunk()
    {
        byte[] sse = Fixtures.bytes("stream-tools.sse");
        body = TestBody.split(sse, 50);

        List<StreamItem> items = drain();

        StringBuilder relayed = new StringBuilder();
        items.stream().filter(RawFrame.class::isInstance)
            .forEach(i -> relayed.append(Fixtures.string(((RawFrame)i).bytes())));
        assertThat(relayed.toString()).isEqualTo(new String(sse, StandardCharsets.UTF_8));
        assertThat(items.get(items.size() - 1)).isSameAs(StreamItem.END);
        assertThat(usages).as("only the final count, not every chunk's running one")
            .containsExactly(new Usage(112, 168, 0, 0, 117));
        assertThat(body.failure()).isNull();
    }

    @Test
    void lendsEachChunkOfWholeEventsToAConsumerThatTakesThem()
    {
        byte[] sse = Fixtures.bytes("stream-tools.sse");
        List<byte[]> events = new ArrayList<>();
        for (String event : new String(sse, StandardCharsets.UTF_8).split("(?<=\r\n\r\n)"))
            events.add(Fixtures.utf8(event));
        body = TestBody.of(events.toArray(new byte[0][]));
        GeminiRawStream stream = new GeminiRawStream(body, usages::add);
        assertThat(stream.acceptRetainedFrames()).isTrue();

        StringBuilder relayed = new StringBuilder();
        int lent = 0;
        StreamItem item;
        while ((item = stream.read()) instanceof RetainedFrame frame)
        {
            assertThat(frame.bytes()).as("the chunk's own buffer").isSameAs(body.buffer(lent++));
            relayed.append(Fixtures.string(frame.bytes()));
            assertThat(body.unreleased()).isEqualTo(1);
            frame.release();
        }

        assertThat(item).isSameAs(StreamItem.END);
        assertThat(lent).isEqualTo(events.size());
        assertThat(relayed.toString()).isEqualTo(new String(sse, StandardCharsets.UTF_8));
        assertThat(usages).containsExactly(new Usage(112, 168, 0, 0, 117));
    }

    @Test
    void aStreamCutBeforeTheFinishEndsWithAnError()
    {
        String sse = new String(Fixtures.bytes("stream-text.sse"), StandardCharsets.UTF_8);
        body = TestBody.split(Fixtures.utf8(sse.substring(0, sse.lastIndexOf("data: "))), 100);

        List<StreamItem> items = drain();

        GatewayException error = ((StreamEvent.Error)items.get(items.size() - 1)).error();
        assertThat(error.kind()).isEqualTo(ErrorKind.UPSTREAM_UNAVAILABLE);
        assertThat(error.getMessage()).isEqualTo("upstream stream ended before completion");
        assertThat(usages).isEmpty();
    }

    @Test
    void textThatMerelyMentionsAFinishReasonDoesNotEndTheStream()
    {
        body = TestBody.of(Fixtures.utf8(
            data("{\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"finishReason\"}]}}]}")));

        List<StreamItem> items = drain();

        assertThat(items.get(items.size() - 1)).isInstanceOf(StreamEvent.Error.class);
    }

    @Test
    void withholdsAnErrorChunkAndEndsWithItAsTheTerminalError()
    {
        String content = data("{\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"Hi\"}]}}]}");
        String error = data("{\"error\":{\"code\":429,\"message\":\"Resource has been exhausted\","
            + "\"status\":\"RESOURCE_EXHAUSTED\"}}");
        body = TestBody.of(Fixtures.utf8(content + error), Fixtures.utf8("never read"));

        List<StreamItem> items = drain();

        assertThat(items).hasSize(2);
        assertThat(Fixtures.string(((RawFrame)items.get(0)).bytes())).isEqualTo(content);
        GatewayException e = ((StreamEvent.Error)items.get(1)).error();
        assertThat(e.kind()).isEqualTo(ErrorKind.RATE_LIMITED);
        assertThat(e.getMessage()).isEqualTo("upstream: Resource has been exhausted");
        assertThat(body.failure()).as("the upstream is aborted").isNotNull();
    }

    @Test
    void anErrorChunkStartingAChunkEmitsNoFrame()
    {
        body = TestBody.of(
            Fixtures.utf8(data("{\"error\":{\"code\":500,\"message\":\"boom\",\"status\":\"INTERNAL\"}}")));

        List<StreamItem> items = drain();

        assertThat(items).hasSize(1);
        assertThat(((StreamEvent.Error)items.get(0)).error().getMessage()).isEqualTo("upstream: boom");
    }

    @Test
    void aBlockedPromptEndsTheStreamAndADroppedConnectionAfterTheEndLosesNothing()
    {
        body = TestBody.of(Fixtures.utf8(data("{\"promptFeedback\":{\"blockReason\":\"SAFETY\"},"
            + "\"usageMetadata\":{\"promptTokenCount\":9}}"))).thenFail(new IOException("reset"));

        List<StreamItem> items = drain();

        assertThat(items.get(items.size() - 1)).isSameAs(StreamItem.END);
        assertThat(usages).containsExactly(new Usage(9, 0, 0, 0, 0));
    }

    @Test
    void usageArrivingAfterTheFinishChunkIsReportedToo()
    {
        body = TestBody.of(Fixtures.utf8(data("{\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"Hi\"}]},"
            + "\"finishReason\":\"STOP\"}]}")
            + data("{\"usageMetadata\":{\"promptTokenCount\":3,\"candidatesTokenCount\":1}}")));

        List<StreamItem> items = drain();

        assertThat(items.get(items.size() - 1)).isSameAs(StreamItem.END);
        assertThat(usages).containsExactly(new Usage(3, 1, 0, 0, 0));
    }
}
