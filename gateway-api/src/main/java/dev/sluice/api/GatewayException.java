package dev.sluice.api;

import dev.sluice.api.exchange.ResponseHeaders;

import java.util.Objects;

/**
 * The one exception type of the SPI: a failure that must reach the client, rendered in the client's dialect.
 *
 * <p>The {@linkplain #getMessage() message} is safe to show to a client: it never contains credentials or
 * prompt content, and it says what to fix ({@code "model: gpt-9 (expected: one of the routed models)"}).
 * A binding completes its stage exceptionally with this type; any other throwable reaching the runtime is
 * reported as {@link ErrorKind#INTERNAL} with a generic message, and logged once.
 *
 * <p>It may carry {@linkplain #headers() headers} for the client ({@code retry-after} and rate limits on a 429, a
 * provider's own headers on an upstream error), written with the error response in every dialect, under the rules of
 * {@link ResponseHeaders}. An error raised after a stream started cannot send headers: they are dropped.
 *
 * <pre>{@code
 * throw new GatewayException(ErrorKind.NOT_FOUND, "model: gpt-9 is not served by this gateway");
 * throw new GatewayException(ErrorKind.RATE_LIMITED, "team-a is over its limit")
 *     .withHeaders(ResponseHeaders.of("retry-after", "2"));
 * }</pre>
 */
public class GatewayException extends RuntimeException
{
    private final ErrorKind kind;
    private final int status;
    private final String param;
    private final String code;
    private final ResponseHeaders headers;

    /** A failure of the given kind with its default status. */
    public GatewayException(ErrorKind kind, String message)
    {
        this(kind, kind.defaultStatus(), message, null, null, null);
    }

    /** A failure of the given kind with its default status and a cause kept for logs (never rendered). */
    public GatewayException(ErrorKind kind, String message, Throwable cause)
    {
        this(kind, kind.defaultStatus(), message, null, null, cause);
    }

    /**
     * Full form.
     *
     * @param kind    what went wrong
     * @param status  the HTTP status to answer with (for upstream errors: the upstream's status)
     * @param message a client-safe message
     * @param param   the request field at fault, or {@code null}
     * @param code    a machine-readable code, or {@code null}
     * @param cause   the cause, for logs only, or {@code null}
     */
    public GatewayException(ErrorKind kind, int status, String message, String param, String code, Throwable cause)
    {
        this(kind, status, message, param, code, cause, ResponseHeaders.EMPTY);
    }

    /**
     * Full form with headers for the client.
     *
     * @param headers headers written with the error response; {@code null} means none
     * @see #GatewayException(ErrorKind, int, String, String, String, Throwable)
     */
    public GatewayException(ErrorKind kind, int status, String message, String param, String code, Throwable cause,
                            ResponseHeaders headers)
    {
        super(Objects.requireNonNull(message, "message"), cause, false, false);
        this.kind = Objects.requireNonNull(kind, "kind");
        if (status < 400 || status > 599)
            throw new IllegalArgumentException("status: " + status + " (expected: 400..599)");
        this.status = status;
        this.param = param;
        this.code = code;
        this.headers = headers == null ? ResponseHeaders.EMPTY : headers;
    }

    /** @return what went wrong */
    public ErrorKind kind()
    {
        return kind;
    }

    /** @return the HTTP status to answer with */
    public int status()
    {
        return status;
    }

    /** @return the request field at fault, or {@code null} */
    public String param()
    {
        return param;
    }

    /** @return a machine-readable code, or {@code null} */
    public String code()
    {
        return code;
    }

    /** @return the headers the client gets with this error; never {@code null} */
    public ResponseHeaders headers()
    {
        return headers;
    }

    /**
     * A copy of this failure (kind, status, message, param, code, cause) with {@code headers} in place of its own.
     * The copy is a plain {@code GatewayException}; a subclass that must survive the copy overrides this.
     *
     * @param headers the headers for the client; {@code null} means none
     * @return the copy, or {@code this} if the headers are the same
     */
    public GatewayException withHeaders(ResponseHeaders headers)
    {
        ResponseHeaders h = headers == null ? ResponseHeaders.EMPTY : headers;
        if (h.equals(this.headers))
            return this;
        return new GatewayException(kind, status, getMessage(), param, code, getCause(), h);
    }

    /**
     * Returns {@code t} itself if it is a {@code GatewayException} (looking through {@code CompletionException}
     * wrappers), or an {@link ErrorKind#INTERNAL} one wrapping it.
     */
    public static GatewayException of(Throwable t)
    {
        Throwable c = t;
        while (c != null)
        {
            if (c instanceof GatewayException g)
                return g;
            if (c instanceof java.util.concurrent.CompletionException || c instanceof java.util.concurrent.ExecutionException)
                c = c.getCause();
            else
                break;
        }
        return new GatewayException(ErrorKind.INTERNAL, "internal gateway error", t);
    }
}
