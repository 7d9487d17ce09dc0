package dev.sluice.plugin.anthropic;

import dev.sluice.api.binding.BodyLimits;
import dev.sluice.api.binding.ServerBinding.Endpoint;
import dev.sluice.api.binding.ServerBinding;
import dev.sluice.api.binding.ServerBinding.ModelIn;
import dev.sluice.api.binding.ServerBinding.Operation;
import dev.sluice.api.codec.RequestPeek;
import dev.sluice.api.exchange.Headers;
import dev.sluice.support.dialect.DialectServer;
import dev.sluice.support.json.JsonPeek;

import java.util.List;

/**
 * Accepts Anthropic Messages requests on one path, token counts below it ({@code /v1/messages/count_tokens}) and model
 * listings beside it ({@code GET /v1/models}, {@code GET /v1/models/{model}}, for requests that carry
 * {@code anthropic-version}, as Anthropic's SDKs send it: OpenAI lists models on the same path). The runtime peeks, builds the exchange and renders replies and
 * errors with {@link AnthropicCodec}; on the request path this binding adds only its {@link BodyLimits}, nothing
 * without them (authentication is a proxy binding's job, and {@code anthropic-version} is accepted but not required,
 * since there is one version). Its client key is {@code x-api-key}, as Anthropic's SDKs send it, or a bearer token, as
 * some gateways' clients do. Immutable and thread-safe.
 */
final class AnthropicServer extends DialectServer
{
    /** The header Anthropic's clients send on every request: it tells their model listing from OpenAI's on one path. */
    static final String VERSION = "anthropic-version";

    /** The scan of a count request, which counts its messages against {@code max_messages} too. */
    private final JsonPeek countPeek;

    AnthropicServer(String path, BodyLimits limits)
    {
        super(AnthropicCodec.INSTANCE, List.of(
            new Endpoint("POST", path),
            new Endpoint("POST", path + "/count_tokens", Operation.COUNT_TOKENS, ModelIn.BODY),
            new Endpoint("GET", sibling(path, "/messages", "/models"), Operation.LIST_MODELS, ModelIn.NONE)
                .whenHeader(VERSION),
            new Endpoint("GET", sibling(path, "/messages", "/models/*"), Operation.GET_MODEL, ModelIn.PATH)
                .whenHeader(VERSION)),
            limits, "messages", AnthropicCodec.PEEK);
        this.countPeek = AnthropicTokenCounts.PEEK.limit(limits);
    }

    /**
     * A count request's scan is {@link AnthropicTokenCounts#PEEK} (it has no {@code max_tokens}) with the
     * {@code max_messages} limit, and a count never streams; other endpoints scan as {@link DialectServer} does.
     */
    @Override
    public RequestPeek peek(Endpoint endpoint, String path, String query, byte[] body)
    {
        if (endpoint.operation() != Operation.COUNT_TOKENS)
            return super.peek(endpoint, path, query, body);
        RequestPeek peek = countPeek.scan(body);
        return peek.stream() ? new RequestPeek(peek.model(), false, peek.modelStart(), peek.modelEnd()) : peek;
    }

    /** @return {@code x-api-key} if set, else the {@code Authorization: Bearer} token, else {@code null} */
    @Override
    public String clientKey(Headers headers, String query)
    {
        String key = headers.get("x-api-key");
        if (key != null && !key.isBlank())
            return key.strip();
        return ServerBinding.bearerToken(headers.get("Authorization"));
    }
}
