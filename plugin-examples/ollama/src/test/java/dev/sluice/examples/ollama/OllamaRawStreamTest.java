package dev.sluice.examples.ollama;

import dev.sluice.api.testing.TestBody;
import dev.sluice.api.ErrorKind;
import dev.sluice.api.GatewayException;
import dev.sluice.api.exchange.EventStream;
import dev.sluice.api.model.RawFrame;
import dev.sluice.api.model.StreamEvent;
import dev.sluice.api.model.StreamItem;
import dev.sluice.api.model.Usage;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.ByteArrayOutputStream;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

class OllamaRawStreamTest
{
    private final List<Usage> usages = new ArrayList<>();
    private TestBody body;

    @AfterEach
    void everyChunkReleasedExactlyOnce()
    {
        if (body != null)
            body.assertAllReleasedOnce();
    }

    private static List<StreamItem> drain(EventStream stream)
    {
        List<StreamItem> items = new ArrayList<>();
        while (true)
        {
            StreamItem item = stream.read();
            assertThat(item).as("all chunks are available at once").isNotNull();
            items.add(item);
            if (item == StreamItem.END || item instanceof StreamEvent.Error)
                return items;
        }
    }

    private static String relayed(List<StreamItem> items)
    {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (StreamItem item : items)
        {
            if (item instanceof RawFrame frame)
                out.writeBytes(Fixtures.utf8(Fixtures.string(frame.bytes())));
        }
        return out.toString(java.nio.charset.StandardCharsets.UTF_8);
    }

    @ParameterizedTest
    @ValueSource(ints = {1, 7, 50, 1 << 20})
    void relaysEveryByteInWholeLinesAndEndsCleanlyAfterTheDoneLine(int chunkSize)
    {
        byte[] ndjson = Fixtures.bytes("stream-text.ndjson");
        body = TestBody.split(ndjson, chunkSize);
        EventStream stream = new OllamaRawStream(body, usages::add);

        List<StreamItem> items = drain(stream);

        assertThat(relayed(items)).isEqualTo(Fixtures.string(ndjson));
        assertThat(items).filteredOn(RawFrame.class::isInstance).allSatisfy(i ->
        {
            RawFrame frame = (RawFrame)i;
            assertThat(frame.atBoundary()).isTrue();
            assertThat(Fixtures.string(frame.bytes())).endsWith("\n");
        });
        assertThat(items.get(items.size() - 1)).isSameAs(StreamItem.END);
        assertThat(stream.read()).as("the terminal item repeats").isSameAs(StreamItem.END);
        assertThat(usages).containsExactly(new Usage(26, 282, 0, 0, 0));
        assertThat(body.failure()).isNull();
    }

    @Test
    void aDoneKeyInsideToolArgumentsIsNotTheEnd()
    {
        String ndjson = Fixtures.string(Fixtures.bytes("stream-tools.ndjson"));
        String withoutDoneLine = ndjson.substring(0,
            ndjson.indexOf("{\"model\":\"llama3.2\",\"created_at\":\"2025-07-07T20:22:19.19314Z\""));
        body = TestBody.split(Fixtures.utf8(withoutDoneLine), 40);

        List<StreamItem> items = drain(new OllamaRawStream(body, usages::add));

        GatewayException error = ((StreamEvent.Error)items.get(items.size() - 1)).error();
        assertThat(error.kind()).isEqualTo(ErrorKind.UPSTREAM_UNAVAILABLE);
        assertThat(error.getMessage()).isEqualTo("upstream stream ended before completion");
        assertThat(relayed(items)).isEqualTo(withoutDoneLine);
        assertThat(usages).isEmpty();
    }

    @Test
    void withholdsAnErrorLineAndEndsWithItAsTheTerminalError()
    {
        String content = "{\"model\":\"m\",\"message\":{\"role\":\"assistant\",\"content\":\"Hi\"},\"done\":false}\n";
        String error = "{\"error\": \"model runner has unexpectedly stopped\"}\n";
        body = TestBody.of(Fixtures.utf8(content + error.substring(0, 10)), Fixtures.utf8(error.substring(10)),
            Fixtures.utf8("never read"));

        List<StreamItem> items = drain(new OllamaRawStream(body, usages::add));

        assertThat(items).hasSize(2);
        assertThat(Fixtures.string(((RawFrame)items.get(0)).bytes())).isEqualTo(content);
        GatewayException e = ((StreamEvent.Error)items.get(1)).error();
        assertThat(e.kind()).isEqualTo(ErrorKind.UPSTREAM_ERROR);
        assertThat(e.getMessage()).isEqualTo("upstream: model runner has unexpectedly stopped");
        assertThat(body.failure()).as("the upstream is aborted").isNotNull();
    }

    @Test
    void aFinalLineWithoutItsNewlineGoesOutWithOne()
    {
        String ndjson = Fixtures.string(Fixtures.bytes("stream-text.ndjson"));
        String last = ndjson.substring(ndjson.indexOf("{\"model\":\"qwen3:8b\",\"created_at\":\"2025-08-04T08:52:19.46Z\""));
        String before = ndjson.substring(0, ndjson.length() - last.length());
        String lastWithoutNewline = last.substring(0, last.length() - 1);

        body = TestBody.of(Fixtures.utf8(before), Fixtures.utf8(lastWithoutNewline));
        List<StreamItem> items = drain(new OllamaRawStream(body, usages::add));
        assertThat(relayed(items)).isEqualTo(ndjson);
        assertThat(items.get(items.size() - 1)).isSameAs(StreamItem.END);
        assertThat(usages).containsExactly(new Usage(26, 282, 0, 0, 0));
    }

    @Test
    void theUpstreamsOwnNewlineAfterAnEarlyFinalLineIsNotDoubled()
    {
        String line = "{\"model\":\"m\",\"message\":{\"role\":\"assistant\",\"content\":\"\"},\"done\":true,\"eval_count\":3}";
        body = TestBody.of(Fixtures.utf8(line), Fixtures.utf8("\n"));

        List<StreamItem> items = drain(new OllamaRawStream(body, usages::add));

        assertThat(relayed(items)).isEqualTo(line + "\n");
        assertThat(items.get(items.size() - 1)).isSameAs(StreamItem.END);
        assertThat(usages).containsExactly(new Usage(0, 3, 0, 0, 0));
    }

    @Test
    void aConnectionDroppedAfterTheDoneLineLostNothing()
    {
        body = TestBody.failingAfter(new GatewayException(ErrorKind.UPSTREAM_UNAVAILABLE, "reset"),
            Fixtures.bytes("stream-tools.ndjson"));

        List<StreamItem> items = drain(new OllamaRawStream(body, usages::add));

        assertThat(items.get(items.size() - 1)).isSameAs(StreamItem.END);
        assertThat(usages).containsExactly(new Usage(169, 15, 0, 0, 0));
    }

    @Test
    void aLineOverTheCapEndsTheStreamWithAnError()
    {
        byte[] huge = new byte[OllamaStreamDecoder.MAX_LINE_BYTES + 1];
        java.util.Arrays.fill(huge, (byte)'a');
        body = TestBody.of(Fixtures.utf8("{\"model\":\"m\",\"done\":false}\n"), huge, Fixtures.utf8("\n"));

        List<StreamItem> items = drain(new OllamaRawStream(body, usages::add));

        assertThat(items).hasSize(2);
        assertThat(((StreamEvent.Error)items.get(1)).error().getMessage())
            .isEqualTo("upstream sent a stream line over 1048576 bytes");
    }
}
