package dev.sluice.support.dialect;

import dev.sluice.api.binding.ServerBinding;
import dev.sluice.support.json.JsonInput;

/**
 * Checks of a request's {@code Content-Type} header, for {@link ServerBinding#checkContentType}. They run on every
 * request, so they read the header in place and allocate only to describe a refusal.
 *
 * <pre>{@code
 * ContentTypes.json(null);                                   // null: no header is read as JSON
 * ContentTypes.json("application/json; charset=utf-8");      // null
 * ContentTypes.json("text/plain");                           // "content-type: \"text/plain\" is not supported (…)"
 * }</pre>
 */
public final class ContentTypes
{
    private static final String JSON = "application/json";
    private static final String EXPECTED = " (expected: application/json)";

    private ContentTypes()
    {
    }

    /**
     * Accepts JSON: no header (or an empty one) at all, {@code application/json} or any {@code application/*+json}
     * type, in any letter case, with no {@code charset} parameter or {@code charset=utf-8} (JSON is UTF-8, RFC 8259).
     *
     * @param contentType the header's value, or {@code null} if the request has none
     * @return {@code null} if the body may be read as JSON, else a client-safe message for a 415 saying what is expected
     */
    public static String json(String contentType)
    {
        if (contentType == null)
            return null;
        int end = contentType.indexOf(';');
        if (end < 0)
            end = contentType.length();
        int start = 0;
        while (start < end && isSpace(contentType.charAt(start)))
            start++;
        int typeEnd = end;
        while (typeEnd > start && isSpace(contentType.charAt(typeEnd - 1)))
            typeEnd--;
        if (typeEnd == start && end == contentType.length())
            return null;
        int length = typeEnd - start;
        boolean json = length == JSON.length() && contentType.regionMatches(true, start, JSON, 0, length)
            || length > "application/+json".length() && contentType.regionMatches(true, start, "application/", 0, 12)
            && contentType.regionMatches(true, typeEnd - 5, "+json", 0, 5);
        if (!json)
            return "content-type: " + JsonInput.shortString(contentType.strip()) + " is not supported" + EXPECTED;
        return end == contentType.length() ? null : charset(contentType, end);
    }

    /** @return {@code null} if the parameters after {@code from} name no charset or UTF-8, else the problem */
    private static String charset(String contentType, int from)
    {
        int at = from;
        while (at < contentType.length())
        {
            // at is on a ';': a parameter follows.
            int start = at + 1;
            int next = contentType.indexOf(';', start);
            if (next < 0)
                next = contentType.length();
            while (start < next && isSpace(contentType.charAt(start)))
                start++;
            if (next - start > 8 && contentType.regionMatches(true, start, "charset=", 0, 8))
            {
                int valueStart = start + 8;
                int valueEnd = next;
                while (valueEnd > valueStart && isSpace(contentType.charAt(valueEnd - 1)))
                    valueEnd--;
                if (valueEnd - valueStart >= 2 && contentType.charAt(valueStart) == '"' && contentType.charAt(valueEnd - 1) == '"')
                {
                    valueStart++;
                    valueEnd--;
                }
                int length = valueEnd - valueStart;
                boolean utf8 = length == 5 && contentType.regionMatches(true, valueStart, "utf-8", 0, 5)
                    || length == 4 && contentType.regionMatches(true, valueStart, "utf8", 0, 4);
                if (!utf8)
                    return "content-type: charset " + JsonInput.shortString(contentType.substring(valueStart, valueEnd))
                        + " is not supported (expected: utf-8, or no charset)";
            }
            at = next;
        }
        return null;
    }

    private static boolean isSpace(char c)
    {
        return c == ' ' || c == '\t';
    }
}
