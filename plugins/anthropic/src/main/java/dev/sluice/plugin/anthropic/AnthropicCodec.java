package dev.sluice.plugin.anthropic;

import dev.sluice.api.GatewayException;
import dev.sluice.api.codec.DialectCodec;
import dev.sluice.api.codec.RequestPeek;
import dev.sluice.api.codec.StreamDecoder;
import dev.sluice.api.codec.StreamEncoder;
import dev.sluice.api.model.ChatRequest;
import dev.sluice.api.model.ChatResponse;
import dev.sluice.api.model.ContentPart;
import dev.sluice.api.model.Usage;
import dev.sluice.support.json.JsonInput;
import dev.sluice.support.json.JsonPeek;

import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Supplier;

/**
 * The Anthropic Messages dialect ({@code POST /v1/messages}): requests, {@code message} responses, the named-event
 * SSE stream and the {@code {"type":"error","error":{…}}} envelope. Stateless and thread-safe; the server and client
 * bindings share {@link #INSTANCE}.
 *
 * <p>Client input that does not decode fails with {@code INVALID_REQUEST} naming the field
 * ({@code messages[0].content[1].source.type: value: "file" (expected: base64 or url)}); content the canonical model
 * cannot carry fails with {@code UNSUPPORTED} naming it ({@code messages[2].content[0].type: "document" is not
 * supported}). Provider output that does not decode fails with {@code UPSTREAM_UNAVAILABLE}. The field mapping is
 * documented on the package-private request, response, stream and error classes.
 *
 * <p>Redacted thinking: Anthropic's {@code redacted_thinking} blocks (opaque, encrypted reasoning that must be sent
 * back unchanged) have no canonical type of their own. They travel as a {@link ContentPart.Thinking} with empty text
 * whose signature is {@value #REDACTED_THINKING_PREFIX} followed by the block's {@code data}; this codec writes them
 * back as {@code redacted_thinking} blocks, so they round-trip. Other dialects see reasoning with no text and an
 * opaque signature, which their encoders omit from requests as they omit all reasoning.
 *
 * <pre>{@code
 * RequestPeek peek = AnthropicCodec.INSTANCE.peek(body);            // model and stream, no tree
 * byte[] upstreamBody = AnthropicCodec.INSTANCE.encodeRequest(request, 8192);  // max_tokens default 8192
 * }</pre>
 */
public final class AnthropicCodec implements DialectCodec
{
    /** The dialect name; bindings of the same dialect exchange bytes untranslated. */
    public static final String DIALECT = "anthropic";

    /** The shared instance. */
    public static final AnthropicCodec INSTANCE = new AnthropicCodec();

    /** The {@code max_tokens} written for a canonical request without a cap, unless the client binding sets another. */
    public static final int DEFAULT_MAX_TOKENS = 4096;

    /** Marks a {@link ContentPart.Thinking} signature that carries a {@code redacted_thinking} block's data. */
    public static final String REDACTED_THINKING_PREFIX = "anthropic-redacted-thinking:";

    private static final JsonInput IN = JsonInput.REQUEST;
    /** Anthropic refuses a request without messages or without {@code max_tokens}; so does the peek. */
    static final JsonPeek PEEK = JsonPeek.modelAndStream().requireMessages("messages").requireInteger("max_tokens");
    private static final char[] ID_CHARS = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
        .toCharArray();

    private AnthropicCodec()
    {
    }

    @Override
    public String dialect()
    {
        return DIALECT;
    }

    /** See {@link AnthropicHeaders}: the request id and rate-limit headers, read from and written for Anthropic. */
    @Override
    public HeaderMapping headerMapping()
    {
        return AnthropicHeaders.INSTANCE;
    }

    /**
     * Scans the body with {@link JsonPeek}: top-level {@code model} and {@code stream}, the whole document checked,
     * {@code messages} a non-empty array of objects with a string {@code role} and {@code max_tokens} an integer (a
     * request Anthropic would refuse is refused here, also on the fast path, which never decodes it).
     */
    @Override
    public RequestPeek peek(byte[] body)
    {
        return PEEK.scan(body);
    }

    @Override
    public ChatRequest decodeRequest(byte[] body)
    {
        return AnthropicRequestDecoder.decode(IN.parse(body));
    }

    /** Encodes with {@value #DEFAULT_MAX_TOKENS} as the {@code max_tokens} of a request that sets none. */
    @Override
    public byte[] encodeRequest(ChatRequest request)
    {
        return AnthropicRequestEncoder.encode(request, DEFAULT_MAX_TOKENS);
    }

    /**
     * Encodes a request; Anthropic requires {@code max_tokens}, so a request without a cap gets
     * {@code defaultMaxTokens}.
     *
     * @throws GatewayException {@code UNSUPPORTED} naming a feature Anthropic cannot carry, {@code INVALID_REQUEST}
     *                          for tool call arguments that are not a JSON object
     */
    public byte[] encodeRequest(ChatRequest request, int defaultMaxTokens)
    {
        return AnthropicRequestEncoder.encode(request, defaultMaxTokens);
    }

    @Override
    public ChatResponse decodeResponse(byte[] body)
    {
        return AnthropicResponses.decode(body);
    }

    @Override
    public byte[] encodeResponse(ChatResponse response)
    {
        return AnthropicResponses.encode(response);
    }

    @Override
    public StreamDecoder newStreamDecoder()
    {
        return new AnthropicStreamDecoder();
    }

    /** Anthropic streams always carry usage, so the encoder never needs the request: {@code request} is not called. */
    @Override
    public StreamEncoder newStreamEncoder(Supplier<ChatRequest> request)
    {
        return new AnthropicStreamEncoder();
    }

    /** See {@link AnthropicModelList}: the listing shape of this dialect. */
    @Override
    public ModelListCodec modelLists()
    {
        return AnthropicModelList.INSTANCE;
    }

    /** See {@link AnthropicTokenCounts}: {@code /v1/messages/count_tokens} requests and {@code {"input_tokens": N}}. */
    @Override
    public TokenCountCodec tokenCounts()
    {
        return AnthropicTokenCounts.INSTANCE;
    }

    /** See {@link AnthropicErrors} for the error {@code type} chosen per kind. */
    @Override
    public byte[] encodeError(GatewayException error)
    {
        return AnthropicErrors.encode(error);
    }

    /** See {@link AnthropicErrors} for the status and kind mapping. */
    @Override
    public GatewayException decodeError(int status, byte[] body)
    {
        return AnthropicErrors.decode(status, body);
    }

    /**
     * Streams through the top level only, skipping everything but {@code usage}; {@code null} if absent or
     * unreadable. Input tokens include cache reads and writes, as {@link Usage} requires.
     */
    @Override
    public Usage scanUsage(byte[] body)
    {
        AnthropicUsage counts = AnthropicUsage.scan(body, 0, body == null ? 0 : body.length);
        return counts == null ? null : counts.toUsage();
    }

    /** @return a {@code Thinking} part carrying a {@code redacted_thinking} block's {@code data} */
    static ContentPart.Thinking redactedThinking(String data)
    {
        return new ContentPart.Thinking("", REDACTED_THINKING_PREFIX + data);
    }

    /** @return the {@code redacted_thinking} data a signature carries, or {@code null} for an ordinary signature */
    static String redactedData(String signature)
    {
        if (signature == null || !signature.startsWith(REDACTED_THINKING_PREFIX))
            return null;
        return signature.substring(REDACTED_THINKING_PREFIX.length());
    }

    /** @return a fresh id in Anthropic's shape, {@code prefix} and 24 base62 characters */
    static String newId(String prefix)
    {
        ThreadLocalRandom random = ThreadLocalRandom.current();
        StringBuilder b = new StringBuilder(prefix.length() + 24).append(prefix);
        for (int i = 0; i < 24; i++)
            b.append(ID_CHARS[random.nextInt(ID_CHARS.length)]);
        return b.toString();
    }
}
