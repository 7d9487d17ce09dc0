package dev.sluice.api;

import java.util.Objects;

/**
 * The one exception type of the SPI: a failure that must reach the client, rendered in the client's dialect.
 *
 * <p>The {@linkplain #getMessage() message} is safe to show to a client: it never contains credentials or
 * prompt content, and it says what to fix ({@code "model: gpt-9 (expected: one of the routed models)"}).
 * A binding completes its stage exceptionally with this type; any other throwable reaching the runtime is
 * reported as {@link ErrorKind#INTERNAL} with a generic message, and logged once.
 *
 * <pre>{@code
 * throw new GatewayException(ErrorKind.NOT_FOUND, "model: gpt-9 is not served by this gateway");
 * }</pre>
 */
public class GatewayException extends RuntimeException
{
    private final ErrorKind kind;
    private final int status;
    private final String param;
    private final String code;

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
        super(Objects.requireNonNull(message, "message"), cause, false, false);
        this.kind = Objects.requireNonNull(kind, "kind");
        if (status < 400 || status > 599)
            throw new IllegalArgumentException("status: " + status + " (expected: 400..599)");
        this.status = status;
        this.param = param;
        this.code = code;
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
