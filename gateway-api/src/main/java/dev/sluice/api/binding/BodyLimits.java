package dev.sluice.api.binding;

import dev.sluice.api.ErrorKind;
import dev.sluice.api.GatewayException;

/**
 * Caps on what one request may ask of a provider, beyond the byte cap ({@code limits.max_body_bytes}): how many
 * messages it carries and how many input tokens it is estimated at (gateway-support's {@code TokenEstimate}). A server
 * binding takes them as its {@code limits} option; every built-in dialect does, and a third-party dialect can too
 * (gateway-support's {@code DialectServer} applies both):
 *
 * <pre>{@code
 * public record MyServerOptions(String path, BodyLimits limits) { ... }        // options: { limits: { max_messages: 200 } }
 *
 * // The message count, in the scan that finds the model: no second pass, no decode.
 * static final JsonPeek PEEK = JsonPeek.modelAndStream().requireMessages("messages");
 * JsonPeek peek = PEEK.limit(options.limits());
 * public RequestPeek peek(String path, String query, byte[] body) { return peek.scan(body); }
 *
 * // The token estimate, on the way in.
 * GatewayException refusal = limits.checkInputTokens("messages", TokenEstimate.inputTokens(exchange.request()));
 * }</pre>
 *
 * <p>A request over a limit is refused before any binding of the chain runs and before any upstream call, with a 400
 * {@code INVALID_REQUEST} in the client's dialect that names the field, the value and the limit. 400 rather than 413:
 * it is the status each provider answers a prompt too long for its model with (OpenAI {@code
 * context_length_exceeded} and {@code array_above_max_length}, Anthropic "prompt is too long", Gemini {@code
 * INVALID_ARGUMENT}), so clients that already handle it (by trimming the conversation) need nothing new; the
 * gateway's 413 stays the byte cap's, a transport limit.
 *
 * <p>Costs: none without a limit ({@link #NONE}). {@code max_messages} is
 * counted by the scan every request already gets. {@code max_input_tokens} needs the canonical request: the body is
 * decoded once per request (a binding or a client binding of another dialect that needs it later reuses it; the
 * same-dialect fast path still forwards the raw bytes, since the exchange is not modified).
 *
 * <p>Immutable and thread-safe.
 *
 * @param maxMessages    the most entries the request's messages array may hold ({@code contents} for Gemini), or
 *                       {@code null} for no limit; a system prompt given as a message counts as one
 * @param maxInputTokens the most input tokens the request may be estimated at ({@code TokenEstimate.inputTokens}), or
 *                       {@code null} for no limit
 */
public record BodyLimits(Integer maxMessages, Long maxInputTokens)
{
    /** No limit: what a server binding without the option gets. */
    public static final BodyLimits NONE = new BodyLimits(null, null);

    public BodyLimits
    {
        if (maxMessages != null && maxMessages < 1)
            throw new IllegalArgumentException("max_messages: value: " + maxMessages + " (expected: a positive integer)");
        if (maxInputTokens != null && maxInputTokens < 1)
            throw new IllegalArgumentException("max_input_tokens: value: " + maxInputTokens
                + " (expected: a positive integer)");
    }

    /** @return {@code limits}, or {@link #NONE} for {@code null} (an options record whose {@code limits} is absent) */
    public static BodyLimits orNone(BodyLimits limits)
    {
        return limits == null ? NONE : limits;
    }

    /** @return whether no limit is set */
    public boolean isNone()
    {
        return maxMessages == null && maxInputTokens == null;
    }

    /**
     * Checks a message count; what a body scan calls once it has counted the array.
     *
     * @param field the array's name in the dialect ({@code messages}, {@code contents}), named in the message
     * @param count how many entries it holds
     * @return {@code null} if within {@code max_messages} (or none is set), else the refusal to throw
     */
    public GatewayException checkMessages(String field, int count)
    {
        if (maxMessages == null || count <= maxMessages)
            return null;
        return new GatewayException(ErrorKind.INVALID_REQUEST, 400, field + ": value: " + count + " messages (expected: at most "
            + maxMessages + ", this gateway's limits.max_messages)", field, "array_above_max_length", null);
    }

    /**
     * Checks an estimate of the request's input tokens against {@code max_input_tokens}.
     *
     * @param field    the request field named in the message ({@code messages}, {@code contents})
     * @param estimate the request's input tokens, estimated (gateway-support's {@code TokenEstimate.inputTokens})
     * @return {@code null} if within the limit (or none is set), else the refusal to throw
     */
    public GatewayException checkInputTokens(String field, long estimate)
    {
        if (maxInputTokens == null || estimate <= maxInputTokens)
            return null;
        return new GatewayException(ErrorKind.INVALID_REQUEST, 400, field + ": value: about " + estimate
            + " input tokens, estimated (expected: at most " + maxInputTokens + ", this gateway's limits.max_input_tokens)",
            field, "context_length_exceeded", null);
    }
}
