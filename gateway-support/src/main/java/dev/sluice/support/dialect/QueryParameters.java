package dev.sluice.support.dialect;

import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;

/**
 * Reads a parameter of a raw query string ({@code a=1&b=two}), as dialects that take parameters in the query need it
 * (a Gemini key, a listing's page size and cursor). Stateless.
 *
 * <pre>{@code
 * String limit = QueryParameters.first(exchange.query(), "limit"); // "2" for "limit=2&after_id=x"
 * }</pre>
 */
public final class QueryParameters
{
    private QueryParameters()
    {
    }

    /**
     * @param query the raw query string, or {@code null}
     * @param name  the parameter's name, compared as it is written (not decoded)
     * @return the first value of parameter {@code name}, form-decoded as UTF-8 ({@code +} is a space; the empty string
     *         for {@code name} without {@code =}), or {@code null} if the query has no such parameter or its value has
     *         a broken {@code %} escape
     */
    public static String first(String query, String name)
    {
        if (query == null || query.isEmpty())
            return null;
        int start = 0;
        while (start <= query.length())
        {
            int end = query.indexOf('&', start);
            if (end < 0)
                end = query.length();
            int eq = query.indexOf('=', start);
            String key = eq < 0 || eq > end ? query.substring(start, end) : query.substring(start, eq);
            if (key.equals(name))
            {
                String value = eq < 0 || eq > end ? "" : query.substring(eq + 1, end);
                try
                {
                    return URLDecoder.decode(value, StandardCharsets.UTF_8);
                }
                catch (IllegalArgumentException e)
                {
                    return null;
                }
            }
            start = end + 1;
        }
        return null;
    }
}
