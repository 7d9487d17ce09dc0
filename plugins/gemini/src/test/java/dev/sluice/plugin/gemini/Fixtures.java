package dev.sluice.plugin.gemini;

import com.fasterxml.jackson.databind.JsonNode;
import dev.sluice.api.json.Json;
import dev.sluice.api.model.StreamEvent;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.math.BigDecimal;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

/** Test fixtures and JSON/stream assertions shared by the codec tests. */
final class Fixtures
{
    /** Numbers compare by value: {@code 0} and {@code 0.0} are the same JSON number to every client. */
    private static final Comparator<JsonNode> SAME_VALUE = (a, b) ->
    {
        if (a.equals(b))
            return 0;
        if (a.isNumber() && b.isNumber())
            return new BigDecimal(a.asText()).compareTo(new BigDecimal(b.asText()));
        return 1;
    };

    private Fixtures()
    {
    }

    static byte[] bytes(String name)
    {
        try (InputStream in = Fixtures.class.getResourceAsStream("/fixtures/" + name))
        {
            if (in == null)
                throw new IllegalArgumentException("no fixture " + name);
            return in.readAllBytes();
        }
        catch (IOException e)
        {
            throw new UncheckedIOException(e);
        }
    }

    static JsonNode tree(byte[] json)
    {
        try
        {
            return Json.MAPPER.readTree(json);
        }
        catch (IOException e)
        {
            throw new UncheckedIOException(e);
        }
    }

    static JsonNode tree(String json)
    {
        return tree(json.getBytes(StandardCharsets.UTF_8));
    }

    static byte[] utf8(String s)
    {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    /** @return the remaining bytes of {@code buffer} as UTF-8, without consuming them */
    static String string(ByteBuffer buffer)
    {
        byte[] bytes = new byte[buffer.remaining()];
        buffer.duplicate().get(bytes);
        return new String(bytes, StandardCharsets.UTF_8);
    }

    /** Asserts two JSON documents are equal as trees (key order free, numbers by value). */
    static void assertSameJson(byte[] actual, byte[] expected)
    {
        JsonNode a = tree(actual);
        JsonNode e = tree(expected);
        if (!a.equals(SAME_VALUE, e))
            assertThat(a.toPrettyString()).isEqualTo(e.toPrettyString());
    }

    /** Decodes {@code sse} with a fresh decoder, fed in chunks of {@code chunkSize} bytes. */
    static List<StreamEvent> decodeStream(byte[] sse, int chunkSize, boolean[] complete)
    {
        GeminiStreamDecoder decoder = new GeminiStreamDecoder();
        List<StreamEvent> events = new ArrayList<>();
        for (int i = 0; i < sse.length; i += chunkSize)
        {
            ByteBuffer chunk = ByteBuffer.wrap(sse, i, Math.min(chunkSize, sse.length - i)).slice().asReadOnlyBuffer();
            decoder.decode(chunk, events::add);
        }
        if (complete != null)
            complete[0] = decoder.complete();
        return events;
    }

    /**
     * Asserts the order documented on {@link StreamEvent}: MessageStart, then each block (numbered from 0 in
     * order) as start, deltas of that block, BlockStop, then Stop, then optionally UsageReport.
     */
    static void assertWellFormed(List<StreamEvent> events)
    {
        assertThat(events).isNotEmpty();
        assertThat(events.get(0)).isInstanceOf(StreamEvent.MessageStart.class);
        int open = -1;
        int next = 0;
        boolean stopped = false;
        boolean usage = false;
        for (int i = 1; i < events.size(); i++)
        {
            StreamEvent e = events.get(i);
            String where = "event " + i + " " + e;
            int startIndex = e instanceof StreamEvent.TextStart t ? t.index()
                : e instanceof StreamEvent.ThinkingStart t ? t.index()
                : e instanceof StreamEvent.ToolCallStart t ? t.index() : -1;
            if (startIndex >= 0)
            {
                int index = startIndex;
                assertThat(stopped).as(where).isFalse();
                assertThat(open).as(where + ": a block is still open").isEqualTo(-1);
                assertThat(index).as(where).isEqualTo(next);
                open = index;
                next++;
            }
            else if (e instanceof StreamEvent.TextDelta d)
                assertThat(d.index()).as(where).isEqualTo(open);
            else if (e instanceof StreamEvent.ThinkingDelta d)
                assertThat(d.index()).as(where).isEqualTo(open);
            else if (e instanceof StreamEvent.ToolCallDelta d)
                assertThat(d.index()).as(where).isEqualTo(open);
            else if (e instanceof StreamEvent.BlockStop s)
            {
                assertThat(s.index()).as(where).isEqualTo(open);
                open = -1;
            }
            else if (e instanceof StreamEvent.Stop)
            {
                assertThat(open).as(where + ": a block is still open").isEqualTo(-1);
                assertThat(stopped).as(where).isFalse();
                stopped = true;
            }
            else if (e instanceof StreamEvent.UsageReport)
            {
                assertThat(stopped).as(where + ": usage before stop").isTrue();
                assertThat(usage).as(where).isFalse();
                usage = true;
            }
            else
            {
                fail(where + ": unexpected");
            }
        }
        assertThat(stopped).as("stream has a Stop").isTrue();
    }
}
