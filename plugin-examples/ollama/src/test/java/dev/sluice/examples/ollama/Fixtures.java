package dev.sluice.examples.ollama;

import com.fasterxml.jackson.databind.JsonNode;
import dev.sluice.api.testing.Contracts;
import dev.sluice.api.model.StreamEvent;
import dev.sluice.support.json.Json;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/** Test fixtures and JSON/stream helpers shared by the codec tests. */
final class Fixtures
{
    /** Numbers compare by value: {@code 0} and {@code 0.0} are the same JSON number to every Ollama client. */
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

    static byte[] utf8(String s)
    {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    static String string(ByteBuffer buffer)
    {
        byte[] bytes = new byte[buffer.remaining()];
        buffer.duplicate().get(bytes);
        return new String(bytes, StandardCharsets.UTF_8);
    }

    static String string(byte[] bytes)
    {
        return new String(bytes, StandardCharsets.UTF_8);
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

    /** See {@link Contracts#assertSameJson}. */
    static void assertSameJson(byte[] actual, byte[] expected)
    {
        Contracts.assertSameJson(actual, expected);
    }

    /** Decodes {@code ndjson} with a fresh decoder, fed in read-only chunks of {@code chunkSize} bytes. */
    static List<StreamEvent> decodeStream(byte[] ndjson, int chunkSize, boolean[] complete)
    {
        OllamaStreamDecoder decoder = new OllamaStreamDecoder();
        List<StreamEvent> events = new ArrayList<>();
        for (int i = 0; i < ndjson.length; i += chunkSize)
        {
            ByteBuffer chunk = ByteBuffer.wrap(ndjson, i, Math.min(chunkSize, ndjson.length - i)).slice().asReadOnlyBuffer();
            decoder.decode(chunk, events::add);
        }
        if (complete != null)
            complete[0] = decoder.complete();
        return events;
    }

    /** Concatenates what an encoder wrote. */
    static String concat(List<ByteBuffer> buffers)
    {
        StringBuilder b = new StringBuilder();
        for (ByteBuffer buffer : buffers)
            b.append(string(buffer));
        return b.toString();
    }
}
