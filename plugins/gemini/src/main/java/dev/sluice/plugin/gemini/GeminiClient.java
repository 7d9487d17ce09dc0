package dev.sluice.plugin.gemini;

import dev.sluice.api.GatewayException;
import dev.sluice.api.binding.ClientBinding;
import dev.sluice.api.codec.Translation;
import dev.sluice.api.exchange.Exchange;
import dev.sluice.api.exchange.Reply;
import dev.sluice.api.model.ChatRequest;
import dev.sluice.api.upstream.UpstreamHeaders;
import dev.sluice.api.upstream.UpstreamReplies;
import dev.sluice.api.upstream.Upstream;

import dev.sluice.api.upstream.UpstreamRequest;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * Speaks the Gemini API to one upstream: {@code POST <url>/models/{model}:generateContent}, or
 * {@code :streamGenerateContent?alt=sse} for streams, with the target model percent-encoded into the path (a
 * leading {@code models/} is dropped, since the path already says it) and the binding's key in
 * {@code x-goog-api-key} (never in the query, where it would reach access logs).
 *
 * <p>Request: an unmodified exchange from a Gemini client is forwarded as its raw bytes; the model lives in the
 * path, so a route alias needs no splice. Anything else is encoded from the canonical request. A request from
 * another dialect is refused if it has extensions (that dialect's own fields; see {@link Translation}), and is
 * encoded without its reasoning parts and with Gemini's placeholder signature on function calls (see
 * {@link GeminiRequestEncoder}).
 *
 * <p>Response: when the client speaks Gemini, the upstream's bytes are relayed as they are ({@link Reply.Bytes},
 * or {@link GeminiRawStream}'s raw frames) and only scanned for usage, even if a binding modified the request.
 * Otherwise the answer is decoded into canonical form ({@link UpstreamEventStream.Translated} for streams).
 *
 * <p>Errors: a non-2xx answer is read (up to {@value UpstreamReplies#MAX_ERROR_BYTES} bytes) and mapped by
 * {@link GeminiCodec#decodeError}. Never blocks; thread-safe.
 */
final class GeminiClient implements ClientBinding
{

    private static final String MODELS = "/models/";

    private final GeminiCodec codec = GeminiCodec.INSTANCE;
    private final Upstream upstream;
    private final UpstreamHeaders headers;
    private final Set<String> droppable;

    GeminiClient(GeminiClientOptions options, Upstream upstream)
    {
        this.upstream = upstream;
        List<Map.Entry<String, String>> fixed = new ArrayList<>();
        if (options.apiKey() != null)
            fixed.add(Map.entry("x-goog-api-key", options.apiKey()));
        Set<String> forward = new HashSet<>();
        for (String name : options.forwardHeaders())
            forward.add(name.toLowerCase(Locale.ROOT));
        UpstreamHeaders headers = new UpstreamHeaders(fixed, "application/json", "text/event-stream", forward);
        this.headers = options.propagateTrace() ? headers.propagatingTrace() : headers;
        this.droppable = Set.copyOf(options.dropUnsupported());
    }

    @Override
    public String dialect()
    {
        return codec.dialect();
    }

    @Override
    public CompletionStage<Reply> handle(Exchange exchange)
    {
        boolean sameDialect = GeminiCodec.DIALECT.equals(exchange.dialect());
        byte[] body;
        boolean stream;
        try
        {
            if (sameDialect && !exchange.modified())
            {
                body = exchange.body();
                stream = exchange.stream();
            }
            else
            {
                ChatRequest request = exchange.request();
                if (sameDialect)
                {
                    body = codec.encodeRequest(request);
                }
                else
                {
                    request = Translation.withoutForeignExtensions(request, exchange.dialect(), GeminiCodec.DIALECT,
                        droppable);
                    body = codec.encodeForeignRequest(request);
                }
                stream = request.stream();
            }
        }
        catch (GatewayException e)
        {
            return CompletableFuture.failedFuture(e);
        }
        UpstreamRequest request = new UpstreamRequest("POST", path(exchange.targetModel(), stream),
            headers.of(stream, exchange), body, "application/json");
        return upstream.send(request, exchange)
            .thenCompose(response ->
                UpstreamReplies.reply(exchange, response, codec, stream, sameDialect, GeminiRawStream::new));
    }

    /** @return the request path below the base URL for {@code model} */
    static String path(String model, boolean stream)
    {
        String name = model.startsWith("models/") ? model.substring("models/".length()) : model;
        String action = stream ? ":" + GeminiServer.STREAM + "?alt=sse" : ":" + GeminiServer.GENERATE;
        return MODELS + encodeSegment(name) + action;
    }

    /** Percent-encodes everything but RFC 3986 unreserved characters, so a model name is one path segment. */
    static String encodeSegment(String segment)
    {
        StringBuilder b = null;
        byte[] bytes = segment.getBytes(StandardCharsets.UTF_8);
        for (int i = 0; i < bytes.length; i++)
        {
            int c = bytes[i] & 0xFF;
            boolean unreserved = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-'
                || c == '.' || c == '_' || c == '~';
            if (unreserved && b == null)
                continue;
            if (b == null)
                b = new StringBuilder(bytes.length + 8).append(segment, 0, i);
            if (unreserved)
                b.append((char)c);
            else
                b.append('%').append(Character.toUpperCase(Character.forDigit(c >> 4, 16)))
                    .append(Character.toUpperCase(Character.forDigit(c & 0xF, 16)));
        }
        return b == null ? segment : b.toString();
    }
}
