package dev.sluice.api;

/**
 * What went wrong, independent of any dialect. Each kind has a default HTTP status; each dialect maps the kind
 * onto its own error {@code type} (OpenAI {@code invalid_request_error}, Anthropic {@code invalid_request_error}, ...).
 */
public enum ErrorKind
{
    /** The request is malformed or has invalid values: 400. */
    INVALID_REQUEST(400),
    /** The request asks for something that this gateway or the target dialect cannot do: 400. */
    UNSUPPORTED(400),
    /** A guardrail refused the content: 400. */
    GUARDRAIL_BLOCKED(400),
    /** Missing or wrong credentials: 401. */
    AUTHENTICATION(401),
    /** The credentials are valid but not allowed to do this: 403. */
    PERMISSION(403),
    /** No such model, route or endpoint: 404. */
    NOT_FOUND(404),
    /** The request body is over the configured cap: 413. */
    REQUEST_TOO_LARGE(413),
    /** Too many requests, locally or upstream: 429. */
    RATE_LIMITED(429),
    /** A bug or an unexpected state in the gateway: 500. */
    INTERNAL(500),
    /** The upstream answered with an error status; the exception carries the upstream status: 502 by default. */
    UPSTREAM_ERROR(502),
    /** The upstream could not be reached, or broke the connection or the stream: 502. */
    UPSTREAM_UNAVAILABLE(502),
    /** The gateway is shutting down or overloaded: 503. */
    UNAVAILABLE(503),
    /** The upstream did not answer in time: 504. */
    UPSTREAM_TIMEOUT(504);

    private final int status;

    ErrorKind(int status)
    {
        this.status = status;
    }

    /** @return the HTTP status used when the exception does not carry its own */
    public int defaultStatus()
    {
        return status;
    }
}
