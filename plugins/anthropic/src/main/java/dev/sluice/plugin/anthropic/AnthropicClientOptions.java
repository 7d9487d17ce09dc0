package dev.sluice.plugin.anthropic;

import dev.sluice.support.config.HttpOptionsConfig;
import dev.sluice.support.config.Options;
import dev.sluice.support.dialect.ClientOptions;
import dev.sluice.support.upstream.ForwardHeaders;
import dev.sluice.support.upstream.KeyPool;

import java.util.List;
import java.util.Set;

/**
 * Options of an {@code anthropic} client binding.
 *
 * <pre>{@code
 * south_anthropic:
 *   type: anthropic
 *   kind: client
 *   options:
 *     url: https://api.anthropic.com/v1          # the base URL; path is appended
 *     api_key: "${{env.ANTHROPIC_API_KEY}}"      # sent as x-api-key
 *     # instead of api_key: keys used in turn; a key answered 401/403 rests 60 s, 429 until its retry-after
 *     # api_keys: [ "${{env.ANTHROPIC_KEY_1}}", "${{env.ANTHROPIC_KEY_2}}" ]
 *     anthropic_version: "2023-06-01"            # sent as anthropic-version (default)
 *     default_max_tokens: 4096                   # max_tokens for requests from clients that set no cap
 *     forward_headers: [anthropic-beta]          # downstream headers copied upstream (default: anthropic-beta)
 *     drop_unsupported: [store, seed]            # other dialects' fields this upstream may ignore (default: none)
 *     propagate_trace: true                      # send the tracing binding's trace context (default: false)
 *     http: { version: http/1.1, first_byte_timeout: 60s }
 * }</pre>
 *
 * {@link #toString()} never shows an API key.
 *
 * @param url              the upstream base URL, e.g. {@code https://api.anthropic.com/v1}; required
 * @param apiKey           the key sent as {@code x-api-key}, or {@code null} for upstreams without authentication (or
 *                         with {@code apiKeys})
 * @param apiKeys          keys sent as {@code x-api-key} in turn, each request with one ({@link KeyPool}: a key the
 *                         provider answers with 401, 403 or 429 rests); empty when not given; not with {@code apiKey},
 *                         not blank, each once
 * @param anthropicVersion the {@code anthropic-version} header; default {@value #DEFAULT_VERSION}
 * @param defaultMaxTokens the {@code max_tokens} of a translated request whose client set no cap (Anthropic requires
 *                         one); default {@value #DEFAULT_MAX_TOKENS}, must be positive
 * @param forwardHeaders   names of downstream headers to copy upstream, case-insensitive; default
 *                         {@code [anthropic-beta]}, so an Anthropic client's beta opt-ins reach the provider; never
 *                         credentials, framing or {@code anthropic-version}
 * @param dropUnsupported  names of other dialects' request fields that may be dropped when translating to Anthropic
 *                         (e.g. OpenAI's {@code store}, {@code service_tier}); also honoured for the canonical fields
 *                         Anthropic has no place for: {@code presence_penalty}, {@code frequency_penalty},
 *                         {@code seed}, {@code metadata}, {@code name} (message names). Anything else such a request
 *                         carries is refused with a 400 naming it
 * @param http             connection settings, or {@code null} for the defaults
 * @param path             the request path appended to {@code url}; default {@value #DEFAULT_PATH}
 * @param propagateTrace   whether to send the exchange's {@code traceparent} ({@link
 *                         dev.sluice.api.exchange.Attributes#TRACEPARENT}, set by a tracing binding) to the upstream;
 *                         default {@code false}: nothing about the trace leaves the gateway
 */
public record AnthropicClientOptions(String url, String apiKey, List<String> apiKeys, String anthropicVersion,
                                     Integer defaultMaxTokens, List<String> forwardHeaders, List<String> dropUnsupported,
                                     HttpOptionsConfig http, String path, Boolean propagateTrace) implements ClientOptions
{
    /** Anthropic's path below the {@code /v1} base URL. */
    public static final String DEFAULT_PATH = "/messages";
    /** The Messages API version every current Anthropic SDK sends. */
    public static final String DEFAULT_VERSION = "2023-06-01";
    /** The default {@code max_tokens} for translated requests without a cap. */
    public static final int DEFAULT_MAX_TOKENS = AnthropicCodec.DEFAULT_MAX_TOKENS;
    /** Forwarded unless the operator says otherwise: it is how Anthropic clients opt into beta features. */
    public static final List<String> DEFAULT_FORWARD_HEADERS = List.of("anthropic-beta");

    /**
     * Headers that are the gateway's to set: the client's credentials must never reach a provider, framing headers
     * belong to the HTTP client, and the API version is this binding's.
     */
    private static final Set<String> NOT_FORWARDABLE = ForwardHeaders.neverPlus("anthropic-version");

    public AnthropicClientOptions
    {
        apiKeys = KeyPool.checkOptions(apiKey, apiKeys);
        apiKey = blankToNull(apiKey);
        anthropicVersion = blankToNull(anthropicVersion) == null ? DEFAULT_VERSION : anthropicVersion;
        if (defaultMaxTokens == null)
            defaultMaxTokens = DEFAULT_MAX_TOKENS;
        else if (defaultMaxTokens < 1)
            throw new IllegalArgumentException("default_max_tokens: value: " + defaultMaxTokens + " (expected: > 0)");
        path = Options.path(path, DEFAULT_PATH);
        forwardHeaders = forwardHeaders == null ? DEFAULT_FORWARD_HEADERS
            : ForwardHeaders.checkOptions(forwardHeaders, NOT_FORWARDABLE);
        if (dropUnsupported == null)
        {
            dropUnsupported = List.of();
        }
        else
        {
            for (int i = 0; i < dropUnsupported.size(); i++)
            {
                if (dropUnsupported.get(i) == null || dropUnsupported.get(i).isBlank())
                    throw new IllegalArgumentException("drop_unsupported[" + i + "]: must not be blank");
            }
            dropUnsupported = List.copyOf(dropUnsupported);
        }
        propagateTrace = Boolean.TRUE.equals(propagateTrace);
    }

    private static String blankToNull(String s)
    {
        return s == null || s.isBlank() ? null : s;
    }

    @Override
    public String toString()
    {
        return "AnthropicClientOptions[url=" + url + ", apiKey=" + (apiKey == null ? "none" : "***")
            + ", apiKeys=" + (apiKeys.isEmpty() ? "none" : apiKeys.size() + " keys")
            + ", anthropicVersion=" + anthropicVersion + ", defaultMaxTokens=" + defaultMaxTokens
            + ", forwardHeaders=" + forwardHeaders + ", dropUnsupported=" + dropUnsupported
            + ", http=" + http + ", path=" + path + ", propagateTrace=" + propagateTrace + "]";
    }
}
