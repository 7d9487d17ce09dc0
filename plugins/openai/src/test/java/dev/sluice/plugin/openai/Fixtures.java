package dev.sluice.plugin.openai;

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

/** Test fixtures and JSON/stream assertions shared by the codec tests. */
final class Fixtures
{
    /** Numbers compare by value: {@code 0} and {@code 0.0} are the same JSON number to every OpenAI client. */
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

    /** See {@link Contracts#assertSameJson}. */
    static void assertSameJson(byte[] actual, byte[] expected)
    {
        Contracts.assertSameJson(actual, expected);
    }

    /** Decodes {@code sse} with a fresh decoder, fed in chunks of {@code chunkSize} bytes. */
    static List<StreamEvent> decodeStream(byte[] sse, int chunkSize, boolean[] complete)
    {
        OpenAiStreamDecoder decoder = new OpenAiStreamDecoder();
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

    /** See {@link Contracts#assertWellFormed}. */
    static void assertWellFormed(List<StreamEvent> events)
    {
        Contracts.assertWellFormed(events);
    }
}
