package dev.sluice.plugin.anthropic;

import com.fasterxml.jackson.databind.JsonNode;
import dev.sluice.api.testing.Contracts;
import dev.sluice.api.codec.StreamEncoder;
import dev.sluice.api.model.StreamEvent;
import dev.sluice.support.json.Json;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** Golden files and JSON/stream helpers shared by the codec tests. */
final class Fixtures
{
    private Fixtures()
    {
    }

    static byte[] bytes(String name)
    {
        try (InputStream in = Fixtures.class.getResourceAsStream("/golden/" + name))
        {
            if (in == null)
                throw new IllegalArgumentException("no golden file " + name);
            return in.readAllBytes();
        }
        catch (IOException e)
        {
            throw new UncheckedIOException(e);
        }
    }

    static String string(String name)
    {
        return new String(bytes(name), StandardCharsets.UTF_8);
    }

    static byte[] utf8(String s)
    {
        return s.getBytes(StandardCharsets.UTF_8);
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
        return tree(utf8(json));
    }

    /**
     * Asserts two JSON documents are the same, key order included: both are pretty-printed from their trees, so only
     * insignificant whitespace may differ.
     */
    static void assertExactJson(byte[] actual, byte[] expected)
    {
        assertThat(tree(actual).toPrettyString()).isEqualTo(tree(expected).toPrettyString());
    }

    /** Decodes {@code sse} with a fresh decoder, fed in chunks of {@code chunkSize} bytes. */
    static List<StreamEvent> decodeStream(byte[] sse, int chunkSize, boolean[] complete)
    {
        AnthropicStreamDecoder decoder = new AnthropicStreamDecoder();
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

    /** Encodes {@code events} with a fresh encoder, then its end. */
    static String encodeStream(List<StreamEvent> events)
    {
        StreamEncoder encoder = AnthropicCodec.INSTANCE.newStreamEncoder(() ->
        {
            throw new AssertionError("the request was decoded");
        });
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (StreamEvent e : events)
            out.writeBytes(bytes(encoder.encode(e)));
        out.writeBytes(bytes(encoder.end()));
        return out.toString(StandardCharsets.UTF_8);
    }

    static byte[] bytes(ByteBuffer buffer)
    {
        byte[] bytes = new byte[buffer.remaining()];
        buffer.duplicate().get(bytes);
        return bytes;
    }

    static String string(ByteBuffer buffer)
    {
        return new String(bytes(buffer), StandardCharsets.UTF_8);
    }

    /** See {@link Contracts#assertWellFormed}. */
    static void assertWellFormed(List<StreamEvent> events)
    {
        Contracts.assertWellFormed(events);
    }
}
