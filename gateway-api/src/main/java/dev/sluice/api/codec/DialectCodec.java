package dev.sluice.api.codec;

import dev.sluice.api.GatewayException;
import dev.sluice.api.exchange.Headers;
import dev.sluice.api.model.ChatRequest;
import dev.sluice.api.model.ChatResponse;
import dev.sluice.api.model.Embeddings;
import dev.sluice.api.model.Usage;
import com.fasterxml.jackson.core.io.JsonStringEncoder;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.function.BiConsumer;
import java.util.function.Supplier;

/**
 * A dialect's wire format, both ways, for requests, responses, streams and errors. A dialect plugin's server and
 * client bindings share one codec. Codecs are stateless and thread-safe; stream codecs are created per stream.
 *
 * <p>Decoding never trusts input: malformed JSON, wrong types and excessive nesting become
 * {@link GatewayException}s of kind {@code INVALID_REQUEST} naming the field; a feature the canonical model cannot
 * carry becomes {@code UNSUPPORTED} naming the feature, never silently dropped.
 */
public interface DialectCodec
{
    /** @return the dialect's name, e.g. {@code "openai"}; equal names mean byte-compatible wire formats */
    String dialect();

    /**
     * Scans {@code body} for the model and the stream flag without building a tree, and checks that it is one
     * well-formed JSON object.
     *
     * @throws GatewayException {@code INVALID_REQUEST} for malformed JSON or a missing/mistyped model
     */
    RequestPeek peek(byte[] body);

    /** Decodes a request body into the canonical model. */
    ChatRequest decodeRequest(byte[] body);

    /**
     * Decodes a request with what the server binding's peek found. The default ignores the peek; a dialect that
     * carries the model or the stream flag outside the body (Gemini: in the path) takes them from it.
     */
    default ChatRequest decodeRequest(byte[] body, RequestPeek peek)
    {
        return decodeRequest(body);
    }

    /** Encodes a canonical request into a request body of this dialect. */
    byte[] encodeRequest(ChatRequest request);

    /** Decodes a complete response body. */
    ChatResponse decodeResponse(byte[] body);

    /** Encodes a canonical response into a complete response body. */
    byte[] encodeResponse(ChatResponse response);

    /** @return a new decoder for one streamed response of this dialect */
    StreamDecoder newStreamDecoder();

    /**
     * @param request the client's request, decoded on the first call; an encoder calls it only when it encodes a
     *                canonical event that depends on it (OpenAI's {@code include_usage}), so a relayed stream of raw
     *                frames never decodes the request
     * @return a new encoder for one streamed response of this dialect
     */
    StreamEncoder newStreamEncoder(Supplier<ChatRequest> request);

    /** @return a complete error body of this dialect for {@code error} (content type {@code application/json}) */
    byte[] encodeError(GatewayException error);

    /**
     * Maps an upstream error response of this dialect onto a {@link GatewayException} that keeps the upstream's
     * status and a safe message.
     */
    GatewayException decodeError(int status, byte[] body);

    /** @return the usage in a complete response body, scanned cheaply, or {@code null} if it has none */
    Usage scanUsage(byte[] body);

    /**
     * This dialect's part in passing a provider's response headers on to clients: where its provider puts the request
     * id and the rate-limit state, which of those headers a client of the same dialect gets as they are, and how a
     * client of this dialect expects rate limits written. Called once per codec; the default,
     * {@link HeaderMapping#NONE}, takes no part (clients still get the provider's {@code retry-after}).
     *
     * <pre>{@code
     * public HeaderMapping headerMapping() { return AcmeHeaders.INSTANCE; }
     * }</pre>
     *
     * @return the mapping; never {@code null}
     */
    default HeaderMapping headerMapping()
    {
        return HeaderMapping.NONE;
    }

    /**
     * This dialect's embeddings, both ways, for its server binding's embeddings endpoint and its client binding's
     * provider. The default, {@code null}, means the dialect has none: an embeddings request is not translated into it.
     *
     * @return the embeddings codec, or {@code null}
     */
    default EmbeddingCodec embeddings()
    {
        return null;
    }

    /**
     * This dialect's token counting, both ways: a request in this dialect's chat shape whose input tokens are wanted,
     * and the count. The default, {@code null}, means the dialect has none: a client binding of it answers a count with
     * the gateway's own estimate.
     *
     * @return the token-count codec, or {@code null}
     */
    default TokenCountCodec tokenCounts()
    {
        return null;
    }

    /**
     * How this dialect lists models: the gateway answers listings itself, with the models the caller may use, in the
     * shape of the client's dialect. The default, {@code null}, means the dialect has no listing (a listing endpoint
     * of it answers 404).
     *
     * @return the model-list codec, or {@code null}
     */
    default ModelListCodec modelLists()
    {
        return null;
    }

    /**
     * Returns {@code body} with the model value replaced, splicing at the offsets found by {@link #peek(byte[])}.
     */
    default byte[] rewriteModel(byte[] body, RequestPeek peek, String model)
    {
        if (peek.modelStart() < 0)
            return body;
        if (isPlainAscii(model))
        {
            // The usual model name needs no escaping: write it straight into the copy, with no String or array on
            // the way (this runs for every aliased request).
            int length = model.length() + 2;
            byte[] out = new byte[body.length - (peek.modelEnd() - peek.modelStart()) + length];
            System.arraycopy(body, 0, out, 0, peek.modelStart());
            int at = peek.modelStart();
            out[at++] = '"';
            for (int i = 0; i < model.length(); i++)
                out[at++] = (byte)model.charAt(i);
            out[at++] = '"';
            System.arraycopy(body, peek.modelEnd(), out, at, body.length - peek.modelEnd());
            return out;
        }
        byte[] value = JsonStringEncoder.getInstance().quoteAsUTF8(model);
        byte[] out = new byte[body.length - (peek.modelEnd() - peek.modelStart()) + value.length + 2];
        System.arraycopy(body, 0, out, 0, peek.modelStart());
        int at = peek.modelStart();
        out[at++] = '"';
        System.arraycopy(value, 0, out, at, value.length);
        at += value.length;
        out[at++] = '"';
        System.arraycopy(body, peek.modelEnd(), out, at, body.length - peek.modelEnd());
        return out;
    }

    /**
     * A dialect's provider response headers, read and written through a neutral {@link RateLimits}, so that two
     * dialects that know nothing of each other still map their headers: the provider's dialect reads, the client's
     * dialect writes. The client binding that turns the provider's answer into a reply applies it (the support
     * module's {@code ProviderHeaders} does, for a binding built on {@code UpstreamReplies}):
     *
     * <ul>
     *   <li>{@code retry-after} and {@code retry-after-ms} reach every client unchanged, whatever the mappings say;</li>
     *   <li>the provider's {@link #requestId request id} reaches every client as {@code x-upstream-request-id}
     *       ({@code x-request-id} stays the gateway's own);</li>
     *   <li>a client of the provider's own dialect gets the headers {@link #relays} accepts, as they are;</li>
     *   <li>a client of another dialect gets what its dialect {@link #writeRateLimits writes} from what the provider's
     *       dialect {@link #readRateLimits read}.</li>
     * </ul>
     *
     * <p>Every method has a default that takes no part, so a dialect implements only the side it has. Implementations
     * are stateless and thread-safe, and run once per upstream response: they must not block and should allocate only
     * what they return. A value that does not parse is left out rather than guessed at.
     *
     * <pre>{@code
     * enum AcmeHeaders implements DialectCodec.HeaderMapping {
     *     INSTANCE;
     *     public String requestId(Headers upstream) { return upstream.get("acme-request-id"); }
     *     public boolean relays(String name) { return name.regionMatches(true, 0, "acme-quota-", 0, 11); }
     *     public RateLimits readRateLimits(Headers upstream, Instant now) {
     *         Long left = RateLimits.count(upstream.get("acme-quota-requests-left"));
     *         return left == null ? null : new RateLimits(null, left, null, null, null, null);
     *     }
     *     public void writeRateLimits(RateLimits limits, Instant now, BiConsumer<String, String> out) {
     *         if (limits.requestsRemaining() != null)
     *             out.accept("acme-quota-requests-left", limits.requestsRemaining().toString());
     *     }
     * }
     * }</pre>
     */
    interface HeaderMapping
    {
        /** Takes no part: no request id, nothing relayed, no rate limits read or written. */
        HeaderMapping NONE = new HeaderMapping()
        {
        };

        /**
         * @param upstream the provider's response headers
         * @return the provider's id for this response (what its support asks for), or {@code null} if it sent none
         */
        default String requestId(Headers upstream)
        {
            return null;
        }

        /**
         * @param name a provider response header's name, in any case
         * @return whether a client of this same dialect gets the header as it is (its rate-limit headers, say); never
         *         asked of a client of another dialect
         */
        default boolean relays(String name)
        {
            return false;
        }

        /**
         * Reads the provider's rate-limit state for a client of another dialect.
         *
         * @param upstream the provider's response headers
         * @param now      when the headers are read: turns a reset given as a duration into a time
         * @return what the headers say, or {@code null} if they say nothing
         */
        default RateLimits readRateLimits(Headers upstream, Instant now)
        {
            return null;
        }

        /**
         * Writes another dialect's rate-limit state as a client of this dialect expects it.
         *
         * @param limits what the provider's dialect read; any field may be {@code null}: write only what is known
         * @param now    the same instant {@link #readRateLimits} was given: turns a reset time into a duration
         * @param out    takes each header name and value, in order; names are not checked against
         *               {@code ResponseHeaders}' reserved ones until the reply is built
         */
        default void writeRateLimits(RateLimits limits, Instant now, BiConsumer<String, String> out)
        {
        }
    }

    /**
     * A provider's rate-limit state in no dialect's spelling: what {@link HeaderMapping#readRateLimits} returns and
     * {@link HeaderMapping#writeRateLimits} writes. Every field is optional ({@code null}: the provider did not say, or
     * said something that did not parse).
     *
     * @param requestsLimit     the requests allowed per window
     * @param requestsRemaining the requests left in the current window
     * @param requestsReset     when the requests window resets
     * @param tokensLimit       the tokens allowed per window
     * @param tokensRemaining   the tokens left in the current window
     * @param tokensReset       when the tokens window resets
     */
    record RateLimits(Long requestsLimit, Long requestsRemaining, Instant requestsReset, Long tokensLimit,
                      Long tokensRemaining, Instant tokensReset)
    {
        /** @return whether no field is known */
        public boolean isEmpty()
        {
            return requestsLimit == null && requestsRemaining == null && requestsReset == null && tokensLimit == null
                && tokensRemaining == null && tokensReset == null;
        }

        /**
         * @param value a header value, or {@code null}
         * @return the value as a count if it is a plain non-negative decimal number of at most 18 digits, else
         *         {@code null}
         */
        public static Long count(String value)
        {
            if (value == null || value.isEmpty() || value.length() > 18)
                return null;
            for (int i = 0; i < value.length(); i++)
            {
                char c = value.charAt(i);
                if (c < '0' || c > '9')
                    return null;
            }
            return Long.parseLong(value);
        }
    }

    /**
     * @return whether {@code s} is printable ASCII without {@code "} or {@code \}: its JSON literal is then the
     *         string between two quotes, one byte per char, with nothing to escape
     */
    private static boolean isPlainAscii(String s)
    {
        for (int i = 0; i < s.length(); i++)
        {
            char c = s.charAt(i);
            if (c < 0x20 || c > 0x7E || c == '"' || c == '\\')
                return false;
        }
        return true;
    }

    /**
     * A dialect's embeddings wire format. Decoding checks like {@link DialectCodec#decodeRequest}: a feature the
     * canonical {@link Embeddings.Request} cannot carry (token-id inputs, say) is refused by name when translating.
     *
     * <pre>{@code
     * Embeddings.Request request = codec.embeddings().decodeRequest(body, peek);   // the client's dialect
     * byte[] upstream = provider.embeddings().encodeRequest(request);                // the provider's
     * }</pre>
     */
    interface EmbeddingCodec
    {
        /** Decodes an embeddings request body; {@code peek} carries a model found outside the body (a path). */
        Embeddings.Request decodeRequest(byte[] body, RequestPeek peek);

        /** Encodes a canonical embeddings request into a request body of this dialect. */
        byte[] encodeRequest(Embeddings.Request request);

        /**
         * Decodes a provider's embeddings answer.
         *
         * @param request the request it answers (a dialect whose answer omits the model names it from there)
         */
        Embeddings.Response decodeResponse(byte[] body, Embeddings.Request request);

        /**
         * Encodes a canonical embeddings answer for a client of this dialect.
         *
         * @param request the client's request: its encoding format and model shape the answer
         */
        byte[] encodeResponse(Embeddings.Response response, Embeddings.Request request);

        /** @return the usage in an embeddings answer of this dialect, scanned cheaply, or {@code null} if it has none */
        default Usage scanUsage(byte[] body)
        {
            return null;
        }
    }

    /**
     * A dialect's token counting wire format: the request is the dialect's chat request (what would be sent), the
     * answer a count of input tokens.
     *
     * <pre>{@code
     * ChatRequest request = codec.tokenCounts().decodeRequest(body, peek);
     * byte[] answer = codec.tokenCounts().encodeResponse(1234);   // {"input_tokens":1234} in Anthropic's dialect
     * }</pre>
     */
    interface TokenCountCodec
    {
        /** Decodes a count request body (a chat request without what only generation needs). */
        ChatRequest decodeRequest(byte[] body, RequestPeek peek);

        /** Encodes a canonical request as a count request of this dialect. */
        byte[] encodeRequest(ChatRequest request);

        /**
         * Decodes a provider's count.
         *
         * @throws GatewayException {@code UPSTREAM} if the body holds no count
         */
        long decodeResponse(byte[] body);

        /** Encodes a count for a client of this dialect. */
        byte[] encodeResponse(long inputTokens);
    }

    /**
     * A dialect's model listings, written by the gateway from the model names the caller may use.
     *
     * <pre>{@code
     * byte[] list = codec.modelLists().encodeList(List.of("gpt-4o", "claude-sonnet-4-5"));
     * }</pre>
     */
    interface ModelListCodec
    {
        /** Encodes a listing of {@code models}, in order, as one complete page. */
        byte[] encodeList(java.util.List<String> models);

        /**
         * Encodes the page of a listing of {@code models} that a listing request's query asks for, by this dialect's
         * paging parameters (a page size, a cursor). The page keeps the order of {@code models}, and a cursor this
         * method writes into a page finds its place in the same list on the next request. The default ignores the
         * query and answers {@link #encodeList}: one complete page, for a dialect whose listings are not paged.
         * Called on a request thread: it must not block.
         *
         * <pre>{@code
         * byte[] page = codec.modelLists().encodePage(models, exchange.query()); // "limit=2&after_id=gpt-4o"
         * }</pre>
         *
         * @param models every model of the listing the caller may see, in listing order
         * @param query  the request's raw query string, or {@code null}
         * @return the page's body
         * @throws GatewayException {@code INVALID_REQUEST} (400) for a paging parameter that is not acceptable (a page
         *                          size out of range or not a number, a cursor that names no place in {@code models}),
         *                          with a message naming the parameter
         * @since 0.9.0
         */
        default byte[] encodePage(java.util.List<String> models, String query)
        {
            return encodeList(models);
        }

        /** Encodes the description of one model. */
        byte[] encodeModel(String model);
    }
}
