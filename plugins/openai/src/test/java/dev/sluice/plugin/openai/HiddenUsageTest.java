package dev.sluice.plugin.openai;

import dev.sluice.api.exchange.EventStream;
import dev.sluice.api.model.RawFrame;
import dev.sluice.api.model.RetainedFrame;
import dev.sluice.api.model.StreamEvent;
import dev.sluice.api.model.StreamItem;
import dev.sluice.api.model.Usage;
import dev.sluice.api.testing.TestBody;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The usage of a same-dialect stream whose {@code include_usage} the gateway added: the request splice
 * ({@link IncludeUsage}) and the relay that records the usage-only chunk without passing it on
 * ({@link OpenAiRawStream#hidingUsage}), whatever the chunking, lent or copied.
 */
class HiddenUsageTest
{
    private static final String HEAD = "{\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":";
    private static final String CONTENT = "data: " + HEAD + "[{\"index\":0,\"delta\":{\"content\":\"Hi\"}}],\"usage\":null}\n\n";
    private static final String FINISH = "data: " + HEAD
        + "[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}],\"usage\":null}\n\n";
    private static final String USAGE = "data: " + HEAD + "[],\"usage\":{\"prompt_tokens\":12,\"completion_tokens\":3,"
        + "\"total_tokens\":15,\"prompt_tokens_details\":{\"cached_tokens\":4}}}\n\n";
    private static final String DONE = "data: [DONE]\n\n";
    private static final Usage EXPECTED = new Usage(12, 3, 4, 0, 0);

    private final List<Usage> usages = new ArrayList<>();

    @Test
    void everyChunkingRelaysAllButTheUsageChunkAndRecordsTheUsageOnce()
    {
        String sse = CONTENT + CONTENT + FINISH + USAGE + DONE;
        String expected = CONTENT + CONTENT + FINISH + DONE;
        for (boolean lend : new boolean[] {false, true})
        {
            for (int size = 1; size <= sse.length(); size++)
            {
                usages.clear();
                TestBody body = TestBody.split(utf8(sse), size);
                EventStream stream = OpenAiRawStream.hidingUsage(body, usages::add);
                if (lend)
                    stream.acceptRetainedFrames();
                List<StreamItem> items = drain(stream);
                assertThat(relayed(items)).as("chunks of %d bytes, lent %s", size, lend).isEqualTo(expected);
                assertThat(items.get(items.size() - 1)).isSameAs(StreamItem.END);
                assertThat(usages).as("chunks of %d bytes", size).containsExactly(EXPECTED);
                body.assertAllReleasedOnce();
            }
        }
    }

    @Test
    void crlfLineEndsLeaveNoStrayLineBehind()
    {
        String sse = (CONTENT + USAGE + DONE).replace("\n", "\r\n");
        for (int size = 1; size <= sse.length(); size++)
        {
            usages.clear();
            TestBody body = TestBody.split(utf8(sse), size);
            List<StreamItem> items = drain(OpenAiRawStream.hidingUsage(body, usages::add));
            String out = relayed(items);
            // The LF of the dropped event's last CRLF may stay behind when it arrives in a later chunk: a blank line,
            // which ends no event for the client's parser. In one chunk it goes with the event.
            assertThat(out.replace("\r\n\n", "\r\n")).as("chunks of %d bytes", size)
                .isEqualTo((CONTENT + DONE).replace("\n", "\r\n"));
            assertThat(usages).containsExactly(EXPECTED);
            body.assertAllReleasedOnce();
        }
        TestBody whole = TestBody.of(utf8(sse));
        assertThat(relayed(drain(OpenAiRawStream.hidingUsage(whole, usages::add))))
            .isEqualTo((CONTENT + DONE).replace("\n", "\r\n"));
    }

    @Test
    void theUsageChunkAndDoneInOneChunkLendTheDoneAlone()
    {
        TestBody body = TestBody.of(utf8(CONTENT), utf8(USAGE + DONE));
        EventStream stream = OpenAiRawStream.hidingUsage(body, usages::add);
        stream.acceptRetainedFrames();

        List<StreamItem> items = drain(stream);

        assertThat(items).hasSize(3);
        assertThat(items.get(0)).isInstanceOf(RetainedFrame.class);
        assertThat(items.get(1)).as("what follows a dropped event is still lent").isInstanceOf(RetainedFrame.class);
        assertThat(text(items.get(1))).isEqualTo(DONE);
        body.assertAllReleasedOnce();
    }

    @Test
    void aClientThatAskedGetsTheUsageChunk()
    {
        String sse = CONTENT + FINISH + USAGE + DONE;
        TestBody body = TestBody.split(utf8(sse), 37);
        assertThat(relayed(drain(new OpenAiRawStream(body, usages::add)))).isEqualTo(sse);
        assertThat(usages).containsExactly(EXPECTED);
    }

    @Test
    void usageOnAChunkWithChoicesIsRecordedAndRelayed()
    {
        String withChoices = "data: " + HEAD + "[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}],"
            + "\"usage\":{\"prompt_tokens\":12,\"completion_tokens\":3,\"prompt_tokens_details\":{\"cached_tokens\":4}}}\n\n";
        TestBody body = TestBody.of(utf8(CONTENT + withChoices + DONE));
        assertThat(relayed(drain(OpenAiRawStream.hidingUsage(body, usages::add)))).isEqualTo(CONTENT + withChoices + DONE);
        assertThat(usages).containsExactly(EXPECTED);
    }

    @Test
    void aMidStreamErrorAfterADroppedEventStillEndsWithTheError()
    {
        String error = "data: {\"error\":{\"message\":\"boom\",\"type\":\"server_error\"}}\n\n";
        TestBody body = TestBody.of(utf8(CONTENT + USAGE + error));
        List<StreamItem> items = drain(OpenAiRawStream.hidingUsage(body, usages::add));
        assertThat(relayed(items)).isEqualTo(CONTENT);
        assertThat(items.get(items.size() - 1)).isInstanceOf(StreamEvent.Error.class);
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        // No stream_options: added last, with no parse.
        "{\"model\":\"m\",\"stream\":true,\"messages\":[]}|{\"model\":\"m\",\"stream\":true,\"messages\":[],\"stream_options\":{\"include_usage\":true}}",
        "'{\"model\":\"m\",\"messages\":[]} \n'|'{\"model\":\"m\",\"messages\":[],\"stream_options\":{\"include_usage\":true}} \n'",
        // The bytes only in a string or a nested object: as without them.
        "{\"model\":\"m\",\"messages\":[{\"content\":\"stream_options\"}]}|{\"model\":\"m\",\"messages\":[{\"content\":\"stream_options\"}],\"stream_options\":{\"include_usage\":true}}",
        "{\"model\":\"m\",\"metadata\":{\"stream_options\":{}}}|{\"model\":\"m\",\"metadata\":{\"stream_options\":{}},\"stream_options\":{\"include_usage\":true}}",
        // stream_options without include_usage, with false or null, or null itself.
        "{\"model\":\"m\",\"stream_options\":{}}|{\"model\":\"m\",\"stream_options\":{\"include_usage\":true}}",
        "{\"model\":\"m\",\"stream_options\":{ \"x\":1 }}|{\"model\":\"m\",\"stream_options\":{\"include_usage\":true, \"x\":1 }}",
        "{\"model\":\"m\",\"stream_options\":{\"include_usage\": false},\"n\":1}|{\"model\":\"m\",\"stream_options\":{\"include_usage\": true},\"n\":1}",
        "{\"model\":\"m\",\"stream_options\":{\"x\":1,\"include_usage\":null}}|{\"model\":\"m\",\"stream_options\":{\"x\":1,\"include_usage\":true}}",
        "{\"model\":\"m\",\"stream_options\":null}|{\"model\":\"m\",\"stream_options\":{\"include_usage\":true}}",
    })
    void splicesIncludeUsageIntoTheRawBody(String body, String expected)
    {
        assertThat(new String(IncludeUsage.splice(utf8(body)), StandardCharsets.UTF_8)).isEqualTo(expected);
    }

    @Test
    void aBodyThatAlreadyAsksIsForwardedUnchanged()
    {
        assertThat(IncludeUsage.splice(utf8("{\"model\":\"m\",\"stream_options\":{\"include_usage\":true}}"))).isNull();
        assertThat(IncludeUsage.splice(utf8("{\"model\":\"m\",\"stream_options\":{\"x\":[1],\"include_usage\" : true}}")))
            .isNull();
    }

    private static byte[] utf8(String s)
    {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static String text(StreamItem item)
    {
        ByteBuffer bytes = (item instanceof RetainedFrame r ? r.bytes() : ((RawFrame)item).bytes()).duplicate();
        byte[] out = new byte[bytes.remaining()];
        bytes.get(out);
        return new String(out, StandardCharsets.UTF_8);
    }

    private static String relayed(List<StreamItem> items)
    {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (StreamItem item : items)
        {
            if (item instanceof RawFrame || item instanceof RetainedFrame)
                out.writeBytes(text(item).getBytes(StandardCharsets.UTF_8));
        }
        return out.toString(StandardCharsets.UTF_8);
    }

    /** Reads to the terminal item; a retained frame is copied for the assertions, then released. */
    private static List<StreamItem> drain(EventStream stream)
    {
        List<StreamItem> items = new ArrayList<>();
        for (int guard = 0; guard < 100_000; guard++)
        {
            StreamItem item = stream.read();
            if (item == null)
                throw new AssertionError("stream stalled");
            if (item instanceof RetainedFrame frame)
            {
                items.add(new RetainedFrame(ByteBuffer.wrap(utf8(text(frame))), frame.atBoundary(), () -> { }));
                frame.release();
                continue;
            }
            items.add(item);
            if (item == StreamItem.END || item instanceof StreamEvent.Error)
                return items;
        }
        throw new AssertionError("stream did not end");
    }
}
