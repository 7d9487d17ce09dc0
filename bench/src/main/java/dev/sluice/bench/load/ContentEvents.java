package dev.sluice.bench.load;

import java.nio.charset.StandardCharsets;

/**
 * Tells a server-sent event that carries content of the answer (text, reasoning, a tool call) from a lifecycle event
 * (a role, a message start, a ping), in any of the three dialects the bench streams, by scanning the event's bytes.
 *
 * <p>The event is given as {@link SseScanner} captures it: its field lines without comments, each ended by
 * {@code \n}, possibly cut short. An event with an {@code event:} line is judged by its name, as Anthropic names its
 * events: {@code content_block_delta} is content, so is a {@code content_block_start} whose data holds
 * {@code "tool_use"}; every other name is not. An event with only data is content when it holds a non-empty
 * {@code "content"}, {@code "refusal"}, {@code "reasoning_content"} or {@code "text"} string, or any
 * {@code "tool_calls"} or {@code "functionCall"} (OpenAI's and Gemini's chunks). A string cut off by the capture
 * right after its opening quote counts as non-empty: only an event longer than the capture is cut.</p>
 *
 * <p>No JSON is parsed and nothing is allocated; stateless, so thread-safe. For example
 * {@code isContent(bytes, bytes.length)} is {@code false} for OpenAI's first chunk
 * {@code data: {"choices":[{"delta":{"role":"assistant","content":""}}]}} and {@code true} for the next one.</p>
 */
final class ContentEvents
{
    private static final byte[] EVENT_FIELD = ascii("event:");
    private static final byte[] CONTENT_BLOCK_DELTA = ascii("content_block_delta");
    private static final byte[] CONTENT_BLOCK_START = ascii("content_block_start");
    private static final byte[] TOOL_USE = ascii("\"tool_use\"");
    private static final byte[] TOOL_CALLS = ascii("\"tool_calls\"");
    private static final byte[] FUNCTION_CALL = ascii("\"functionCall\"");
    private static final byte[][] STRING_KEYS = {ascii("\"content\""), ascii("\"refusal\""), ascii("\"reasoning_content\""),
        ascii("\"text\"")};

    private ContentEvents()
    {
    }

    /**
     * @param event the event's captured bytes
     * @param length how many of them are the event
     * @return whether the event carries content of the answer
     */
    static boolean isContent(byte[] event, int length)
    {
        int name = eventName(event, length);
        if (name >= 0)
        {
            if (startsWithName(event, length, name, CONTENT_BLOCK_DELTA))
                return true;
            return startsWithName(event, length, name, CONTENT_BLOCK_START) && indexOf(event, length, TOOL_USE, 0) >= 0;
        }
        if (indexOf(event, length, TOOL_CALLS, 0) >= 0 || indexOf(event, length, FUNCTION_CALL, 0) >= 0)
            return true;
        for (byte[] key : STRING_KEYS)
        {
            if (hasNonEmptyString(event, length, key))
                return true;
        }
        return false;
    }

    /** @return where the value of the event's {@code event:} line starts (after its optional space), or -1 */
    private static int eventName(byte[] event, int length)
    {
        int line = 0;
        while (line < length)
        {
            if (regionMatches(event, length, line, EVENT_FIELD))
            {
                int value = line + EVENT_FIELD.length;
                return value < length && event[value] == ' ' ? value + 1 : value;
            }
            while (line < length && event[line] != '\n')
                line++;
            line++;
        }
        return -1;
    }

    /** @return whether the name at {@code at} is exactly {@code name}, up to the end of its line */
    private static boolean startsWithName(byte[] event, int length, int at, byte[] name)
    {
        if (!regionMatches(event, length, at, name))
            return false;
        int end = at + name.length;
        return end == length || event[end] == '\n' || event[end] == ' ';
    }

    /** @return whether some occurrence of {@code key} is followed, after a colon, by a string that is not empty */
    private static boolean hasNonEmptyString(byte[] event, int length, byte[] key)
    {
        int from = 0;
        int at;
        while ((at = indexOf(event, length, key, from)) >= 0)
        {
            int i = skipSpaces(event, length, at + key.length);
            if (i < length && event[i] == ':')
            {
                i = skipSpaces(event, length, i + 1);
                if (i < length && event[i] == '"' && (i + 1 == length || event[i + 1] != '"'))
                    return true;
            }
            from = at + key.length;
        }
        return false;
    }

    private static int skipSpaces(byte[] event, int length, int from)
    {
        int i = from;
        while (i < length && (event[i] == ' ' || event[i] == '\t'))
            i++;
        return i;
    }

    private static int indexOf(byte[] event, int length, byte[] needle, int from)
    {
        for (int i = from, last = length - needle.length; i <= last; i++)
        {
            if (regionMatches(event, length, i, needle))
                return i;
        }
        return -1;
    }

    private static boolean regionMatches(byte[] event, int length, int at, byte[] needle)
    {
        if (at + needle.length > length)
            return false;
        for (int j = 0; j < needle.length; j++)
        {
            if (event[at + j] != needle[j])
                return false;
        }
        return true;
    }

    private static byte[] ascii(String text)
    {
        return text.getBytes(StandardCharsets.US_ASCII);
    }
}
