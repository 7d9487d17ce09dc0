package dev.sluice.plugin.openai.responses;

import dev.sluice.api.model.StreamEvent;
import dev.sluice.api.testing.Contracts;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The Responses codec tests' fixtures ({@code /fixtures/responses/}) and golden files: an expected output that is
 * missing is written to {@code target/golden/} for review and the test fails, so a golden file is always one a person
 * read before checking it in.
 */
final class Golden
{
    private Golden()
    {
    }

    static byte[] bytes(String name)
    {
        try (InputStream in = Golden.class.getResourceAsStream("/fixtures/responses/" + name))
        {
            if (in == null)
                return null;
            return in.readAllBytes();
        }
        catch (IOException e)
        {
            throw new UncheckedIOException(e);
        }
    }

    static byte[] fixture(String name)
    {
        byte[] bytes = bytes(name);
        if (bytes == null)
            throw new IllegalArgumentException("no fixture " + name);
        return bytes;
    }

    /** Asserts {@code actual} is the same JSON as the golden file {@code name}. */
    static void assertJson(byte[] actual, String name)
    {
        Contracts.assertSameJson(actual, expected(actual, name));
    }

    /** Asserts {@code actual} is byte for byte the golden file {@code name} (a stream: events, names, order). */
    static void assertText(byte[] actual, String name)
    {
        String expected = new String(expected(actual, name), StandardCharsets.UTF_8);
        if (!expected.equals(new String(actual, StandardCharsets.UTF_8)))
            throw new AssertionError("differs from " + name + ":\n" + new String(actual, StandardCharsets.UTF_8));
    }

    private static byte[] expected(byte[] actual, String name)
    {
        byte[] expected = bytes(name);
        if (expected != null)
            return expected;
        try
        {
            Path out = Path.of("target", "golden", name);
            Files.createDirectories(out.getParent());
            Files.write(out, actual);
            throw new AssertionError("no golden file " + name + "; the actual output is in " + out.toAbsolutePath());
        }
        catch (IOException e)
        {
            throw new UncheckedIOException(e);
        }
    }

    /** Decodes {@code sse} with a fresh decoder, fed in chunks of {@code chunkSize} bytes. */
    static List<StreamEvent> decode(byte[] sse, int chunkSize, boolean[] complete)
    {
        ResponsesStreamDecoder decoder = new ResponsesStreamDecoder();
        List<StreamEvent> events = new ArrayList<>();
        for (int i = 0; i < sse.length; i += chunkSize)
            decoder.decode(ByteBuffer.wrap(sse, i, Math.min(chunkSize, sse.length - i)).slice(), events::add);
        if (complete != null)
            complete[0] = decoder.complete();
        return events;
    }

    /** @return the bytes a fresh encoder writes for {@code events}, then its end */
    static byte[] encode(List<StreamEvent> events)
    {
        ResponsesStreamEncoder encoder = new ResponsesStreamEncoder();
        List<ByteBuffer> parts = new ArrayList<>();
        for (StreamEvent event : events)
            parts.add(encoder.encode(event));
        parts.add(encoder.end());
        int size = parts.stream().mapToInt(ByteBuffer::remaining).sum();
        ByteBuffer all = ByteBuffer.allocate(size);
        parts.forEach(all::put);
        return all.array();
    }
}
