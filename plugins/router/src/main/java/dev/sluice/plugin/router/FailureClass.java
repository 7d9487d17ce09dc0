package dev.sluice.plugin.router;

import dev.sluice.api.ErrorKind;
import dev.sluice.api.GatewayException;

import java.util.Locale;

/**
 * What kind of failure an attempt had, as a route's {@code retry.on} names it. Classified from the failure's kind and
 * status and the status the upstream answered the attempt with.
 */
enum FailureClass
{
    /** Refused, reset, a broken connection or stream, an upstream pool with no room: {@code connect}. */
    CONNECT("connect"),
    /** A connect, first-byte, idle or total timeout: {@code timeout}. */
    TIMEOUT("timeout"),
    /** The provider answered 429: {@code 429}. */
    RATE_LIMITED("429"),
    /** The provider answered 5xx (529 included), or sent an error event that maps to one: {@code 5xx}. */
    SERVER("5xx"),
    /** The prompt is too long for this target's context window: {@code context_window}. */
    CONTEXT_WINDOW("context_window"),
    /** Anything else (other 4xx, the gateway's own errors): never retried. */
    OTHER("other");

    private static final String[] CONTEXT_MARKERS = {"context_length_exceeded", "context length", "context window",
        "prompt is too long", "maximum context", "too many tokens", "input is too long"};

    private final String name;

    FailureClass(String name)
    {
        this.name = name;
    }

    /** @return the name used in {@code retry.on}, metrics and logs */
    String label()
    {
        return name;
    }

    /** @return whether failures of this class count towards ejecting a target */
    boolean ejects()
    {
        return this == CONNECT || this == TIMEOUT || this == SERVER;
    }

    static FailureClass parse(String value, String path)
    {
        for (FailureClass c : values())
        {
            if (c != OTHER && c.name.equals(value))
                return c;
        }
        throw new IllegalArgumentException(path + ": value: \"" + value
            + "\" (expected: connect, timeout, 429, 5xx or context_window)");
    }

    /**
     * @param error          the attempt's failure
     * @param upstreamStatus the status the upstream answered the attempt with, 0 if none
     */
    static FailureClass of(GatewayException error, int upstreamStatus)
    {
        ErrorKind kind = error.kind();
        int status = upstreamStatus >= 400 ? upstreamStatus : error.status();
        if (kind == ErrorKind.UPSTREAM_TIMEOUT)
            return TIMEOUT;
        if (status == 429 || kind == ErrorKind.RATE_LIMITED)
            return RATE_LIMITED;
        if (kind == ErrorKind.UPSTREAM_UNAVAILABLE || kind == ErrorKind.UNAVAILABLE)
            return upstreamStatus >= 500 ? SERVER : CONNECT;
        if (kind == ErrorKind.UPSTREAM_ERROR && status >= 500)
            return SERVER;
        if (kind == ErrorKind.INTERNAL)
            return OTHER;
        if (status == 400 || status == 413)
            return contextWindow(error) ? CONTEXT_WINDOW : OTHER;
        return status >= 500 && upstreamStatus >= 500 ? SERVER : OTHER;
    }

    private static boolean contextWindow(GatewayException error)
    {
        if ("context_length_exceeded".equals(error.code()))
            return true;
        String message = error.getMessage().toLowerCase(Locale.ROOT);
        for (String marker : CONTEXT_MARKERS)
        {
            if (message.contains(marker))
                return true;
        }
        return false;
    }
}
