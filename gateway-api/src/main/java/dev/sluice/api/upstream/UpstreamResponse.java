package dev.sluice.api.upstream;

import dev.sluice.api.exchange.Headers;

import java.util.List;
import java.util.function.BiConsumer;

/**
 * An upstream response whose headers have arrived; the body is read from {@link #body()}, which must be read to its
 * end or failed.
 *
 * <pre>{@code
 * upstream.send(request, exchange).thenCompose(response -> response.status() == 200
 *     ? relay(response.body())
 *     : readError(response.body(), response.contentLength()));
 * }</pre>
 */
public interface UpstreamResponse
{
    /** @return the HTTP status */
    int status();

    /** @return the first value of header {@code name}, or {@code null} */
    String header(String name);

    /**
     * Every response header, as a read-only view (no copy), for a reader that scans them once (as
     * gateway-support's {@code ProviderHeaders} does) instead of asking for names one by one.
     *
     * <p>The default, for implementations written before this method, has no headers to enumerate: {@code get} asks
     * {@link #header(String)}, {@code forEach} sees nothing. The runtime's implementation overrides it.
     *
     * @return the headers; never {@code null}
     */
    default Headers headers()
    {
        return new Headers()
        {
            @Override
            public String get(String name)
            {
                return header(name);
            }

            @Override
            public List<String> getAll(String name)
            {
                String value = header(name);
                return value == null ? List.of() : List.of(value);
            }

            @Override
            public void forEach(BiConsumer<String, String> action)
            {
                // Nothing to enumerate.
            }
        };
    }

    /** @return the body; must be read to the end or {@linkplain BodySource#fail(Throwable) failed} */
    BodySource body();

    /**
     * The body's length as the upstream declared it in {@code Content-Length}: a size hint that lets a reader
     * allocate once. It is a declaration, not a guarantee: a reader must still bound what it reads by its own limit
     * and cope with a body that turns out shorter or longer.
     *
     * <p>The default parses {@link #header(String) header("content-length")}; a runtime that has the value parsed
     * already overrides it. Either way a value that is not one plain decimal number counts as absent.
     *
     * @return the declared length in bytes, or {@code -1} if there is no {@code Content-Length} or its value is not a
     *         non-negative decimal number (as when the body is chunked or an HTTP/2 stream without one)
     */
    default long contentLength()
    {
        return parseLength(header("content-length"));
    }

    /**
     * @return the value of a {@code Content-Length}, or {@code -1} if {@code value} is {@code null}, empty, not only
     *         ASCII digits (a sign, a list, spaces are refused) or over {@link Long#MAX_VALUE}
     */
    private static long parseLength(String value)
    {
        if (value == null || value.isEmpty() || value.length() > 19)
            return -1;
        long length = 0;
        for (int i = 0; i < value.length(); i++)
        {
            char c = value.charAt(i);
            if (c < '0' || c > '9')
                return -1;
            length = length * 10 + (c - '0');
        }
        // 19 digits can overflow; anything that large is no usable declaration anyway.
        return length < 0 ? -1 : length;
    }
}
