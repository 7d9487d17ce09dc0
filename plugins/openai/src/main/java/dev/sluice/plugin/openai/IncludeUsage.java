package dev.sluice.plugin.openai;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import dev.sluice.api.ErrorKind;
import dev.sluice.api.GatewayException;
import dev.sluice.support.json.Json;

import java.io.IOException;
import java.nio.charset.StandardCharsets;

/**
 * Splices {@code "stream_options":{"include_usage":true}} into a streamed request's raw body, so that the provider
 * reports the usage of a same-dialect stream even when the client did not ask (budgets and logs need the tokens).
 * The body is not decoded; it was already checked to be one JSON object by the peek.
 *
 * <p>Cost: a body without the bytes {@code "stream_options"} (the usual case) takes one byte search and one copy
 * with the field added before the closing brace, with no parse. A body that has them is scanned once more with the
 * streaming parser (top level and {@code stream_options} only, the rest skipped) to find where to write:
 * <ul>
 *   <li>{@code "include_usage": true}: the client asked; the body is forwarded unchanged;</li>
 *   <li>{@code "include_usage": false} or {@code null}: the value becomes {@code true};</li>
 *   <li>{@code stream_options} without {@code include_usage}: it is added first in that object;</li>
 *   <li>{@code "stream_options": null}: it becomes {@code {"include_usage":true}};</li>
 *   <li>the bytes only inside a string or a nested object: as for a body without them.</li>
 * </ul>
 * The field is added last in the object, so a provider that keeps the last of duplicated keys sees the gateway's.
 * Stateless.
 */
final class IncludeUsage
{
    private static final byte[] STREAM_OPTIONS = "\"stream_options\"".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] APPENDED = ",\"stream_options\":{\"include_usage\":true}".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] OBJECT = "{\"include_usage\":true}".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] FIELD = "\"include_usage\":true".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] TRUE = "true".getBytes(StandardCharsets.US_ASCII);

    private IncludeUsage()
    {
    }

    /**
     * @param body a request body that is one JSON object
     * @return the body asking for usage, or {@code null} if it already does ({@code include_usage: true})
     */
    static byte[] splice(byte[] body)
    {
        if (!contains(body, STREAM_OPTIONS))
            return append(body);
        try (JsonParser parser = Json.FACTORY.createParser(body))
        {
            if (parser.nextToken() != JsonToken.START_OBJECT)
                return append(body);
            // The last top-level stream_options wins, as with the providers' JSON parsers.
            int[] edit = null;
            while (parser.nextToken() == JsonToken.FIELD_NAME)
            {
                String name = parser.currentName();
                JsonToken value = parser.nextToken();
                if ("stream_options".equals(name))
                    edit = streamOptions(parser, value);
                else
                    parser.skipChildren();
            }
            if (edit == null)
                return append(body);
            if (edit.length == 0)
                return null;
            return switch (edit[2])
            {
                case 0 -> splice(body, edit[0], edit[1], TRUE, false);
                case 1 -> splice(body, edit[0], edit[1], OBJECT, false);
                case 2 -> splice(body, edit[0], edit[0], FIELD, false);
                default -> splice(body, edit[0], edit[0], FIELD, true);
            };
        }
        catch (IOException e)
        {
            // The peek accepted the body, so this does not happen; refuse rather than forward a guess.
            throw new GatewayException(ErrorKind.INVALID_REQUEST, "request body could not be read", e);
        }
    }

    /**
     * Reads the {@code stream_options} value (the parser is on its first token) to its end.
     *
     * @return {@code {}} if it asks for usage, else {@code {from, to, what}}: replace {@code body[from, to)} with
     *         {@code true} (0) or with a whole object (1), or insert the field at {@code from} into an empty object (2)
     *         or, followed by a comma, into one with other fields (3)
     */
    private static int[] streamOptions(JsonParser parser, JsonToken value) throws IOException
    {
        if (value != JsonToken.START_OBJECT)
        {
            int from = (int)parser.currentTokenLocation().getByteOffset();
            parser.skipChildren();
            int to = (int)parser.currentLocation().getByteOffset();
            return new int[] {from, to, 1};
        }
        int open = (int)parser.currentTokenLocation().getByteOffset();
        int[] edit = new int[] {open + 1, open + 1, 2};
        boolean empty = true;
        while (parser.nextToken() == JsonToken.FIELD_NAME)
        {
            empty = false;
            String name = parser.currentName();
            JsonToken v = parser.nextToken();
            if ("include_usage".equals(name))
            {
                if (v == JsonToken.VALUE_TRUE)
                    edit = new int[0];
                else
                {
                    int from = (int)parser.currentTokenLocation().getByteOffset();
                    parser.skipChildren();
                    edit = new int[] {from, (int)parser.currentLocation().getByteOffset(), 0};
                }
            }
            else
                parser.skipChildren();
        }
        if (edit.length == 3 && edit[2] == 2 && !empty)
            edit[2] = 3;
        return edit;
    }

    /** @return {@code body} with {@code body[from, to)} replaced by {@code with}, and a comma after it if asked */
    private static byte[] splice(byte[] body, int from, int to, byte[] with, boolean comma)
    {
        int extra = comma ? 1 : 0;
        byte[] out = new byte[body.length - (to - from) + with.length + extra];
        System.arraycopy(body, 0, out, 0, from);
        System.arraycopy(with, 0, out, from, with.length);
        if (comma)
            out[from + with.length] = ',';
        System.arraycopy(body, to, out, from + with.length + extra, body.length - to);
        return out;
    }

    /** @return {@code body} with the field added before the closing brace of the top-level object */
    private static byte[] append(byte[] body)
    {
        int close = body.length - 1;
        while (close > 0 && body[close] != '}')
            close--;
        return splice(body, close, close, APPENDED, false);
    }

    private static boolean contains(byte[] body, byte[] needle)
    {
        int last = body.length - needle.length;
        outer:
        for (int i = 0; i <= last; i++)
        {
            if (body[i] != '"')
                continue;
            for (int j = 1; j < needle.length; j++)
            {
                if (body[i + j] != needle[j])
                    continue outer;
            }
            return true;
        }
        return false;
    }
}
