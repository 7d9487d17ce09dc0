package dev.sluice.support.sse;

import com.code_intelligence.jazzer.junit.FuzzTest;
import dev.sluice.api.testing.FuzzInputs;
import org.junit.jupiter.api.Timeout;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Coverage-guided fuzzing of {@link SseParser} on arbitrary bytes in arbitrary chunk splits: it never throws except
 * for an event over its limit, never loops (the {@code @Timeout} is the fuzzer's per-input timeout too), buffers no
 * event over the limit, and finds the events a straightforward reading of the SSE line rules finds in the whole
 * input at once. Seeds: {@code src/test/resources/dev/sluice/api/sse/SseParserFuzzTestInputs/} (first byte: the
 * chunk split, see {@link FuzzInputs#chunks}).
 */
@Timeout(10)
class SseParserFuzzTest
{
    /** Small, so that the fuzzer reaches the limit often. */
    private static final int MAX_EVENT_BYTES = 256;

    private record Event(String name, byte[] data)
    {
        @Override
        public boolean equals(Object o)
        {
            return o instanceof Event e && java.util.Objects.equals(name, e.name) && Arrays.equals(data, e.data);
        }

        @Override
        public int hashCode()
        {
            return Arrays.hashCode(data);
        }

        @Override
        public String toString()
        {
            return name + ":" + new String(data, StandardCharsets.UTF_8);
        }
    }

    @FuzzTest
    void parsesAnyChunkingLikeTheLineRules(byte[] input)
    {
        List<Event> events = new ArrayList<>();
        SseParser parser = new SseParser((name, bytes, offset, length) ->
        {
            if (length > MAX_EVENT_BYTES)
                throw new AssertionError("an event of " + length + " bytes passed the limit of " + MAX_EVENT_BYTES);
            events.add(new Event(name, Arrays.copyOfRange(bytes, offset, offset + length)));
        }, MAX_EVENT_BYTES);
        Reference expected = new Reference(FuzzInputs.payload(input));
        boolean overLimit = false;
        for (ByteBuffer chunk : FuzzInputs.chunks(input))
        {
            int position = chunk.position();
            try
            {
                parser.feed(chunk);
            }
            catch (IllegalStateException e)
            {
                overLimit = true;
                break;
            }
            if (chunk.position() != position)
                throw new AssertionError("feed moved the chunk's position");
        }
        if (overLimit != expected.overLimit)
            throw new AssertionError(overLimit ? "failed an input whose events are all within the limit"
                : "accepted an event over the limit");
        if (!overLimit && !events.equals(expected.events))
            throw new AssertionError("events " + events + " (expected: " + expected.events + ")");
        if (!overLimit && parser.atBoundary() != expected.atBoundary)
            throw new AssertionError("atBoundary() " + parser.atBoundary());
    }

    /**
     * The SSE line rules read directly, on the whole input: lines end at CRLF, CR or LF; {@code data} lines append to
     * the data (joined by LF), {@code event} sets the name, one space after the colon is dropped, a field without a
     * colon has an empty value, other lines are ignored, an empty line dispatches an event if a data line was seen.
     * The limit counts the bytes of an event's lines, line ends excluded.
     */
    private static final class Reference
    {
        final List<Event> events = new ArrayList<>();
        boolean overLimit;
        boolean atBoundary;

        Reference(byte[] in)
        {
            String name = null;
            ByteArrayOutputStream data = null;
            int eventBytes = 0;
            int lineStart = 0;
            int i = 0;
            boolean partialLine = false;
            while (i <= in.length)
            {
                if (i < in.length && in[i] != '\n' && in[i] != '\r')
                {
                    if (++eventBytes > MAX_EVENT_BYTES)
                    {
                        overLimit = true;
                        return;
                    }
                    i++;
                    continue;
                }
                if (i == in.length)
                {
                    partialLine = i > lineStart;
                    break;
                }
                byte[] line = Arrays.copyOfRange(in, lineStart, i);
                i += in[i] == '\r' && i + 1 < in.length && in[i + 1] == '\n' ? 2 : 1;
                lineStart = i;
                if (line.length == 0)
                {
                    if (data != null)
                        events.add(new Event(name, data.toByteArray()));
                    name = null;
                    data = null;
                    eventBytes = 0;
                    continue;
                }
                if (isField(line, "data"))
                {
                    if (data == null)
                        data = new ByteArrayOutputStream();
                    else
                        data.write('\n');
                    data.writeBytes(value(line, 4));
                }
                else if (isField(line, "event"))
                {
                    name = new String(value(line, 5), StandardCharsets.UTF_8);
                }
            }
            atBoundary = !partialLine && data == null && name == null;
        }

        private static boolean isField(byte[] line, String field)
        {
            byte[] f = field.getBytes(StandardCharsets.US_ASCII);
            return line.length >= f.length && Arrays.equals(line, 0, f.length, f, 0, f.length)
                && (line.length == f.length || line[f.length] == ':');
        }

        private static byte[] value(byte[] line, int nameLength)
        {
            int start = Math.min(nameLength + 1, line.length);
            if (start < line.length && line[start] == ' ')
                start++;
            return Arrays.copyOfRange(line, start, line.length);
        }
    }
}
