package dev.sluice.plugin.openai;

import dev.sluice.support.config.HttpOptionsConfig;
import dev.sluice.support.config.Options;
import dev.sluice.support.dialect.ClientOptions;
import dev.sluice.support.upstream.ForwardHeaders;
import dev.sluice.support.upstream.KeyPool;

import java.util.List;
import java.util.Set;

/**
 * Options of an {@code openai} client binding.
 *
 * <pre>{@code
 * south_openai:
 *   type: openai
 *   kind: client
 *   options:
 *     url: https://api.openai.com/v1          # the base URL; path is appended
 *     api_key: "${{env.OPENAI_API_KEY}}"      # sent as Authorization: Bearer ...
 *     # instead of api_key: keys used in turn; a key answered 401/403 rests 60 s, 429 until its retry-after
 *     # api_keys: [ "${{env.OPENAI_KEY_1}}", "${{env.OPENAI_KEY_2}}" ]
 *     organization: org-...                   # optional, OpenAI-Organization
 *     project: proj_...                       # optional, OpenAI-Project
 *     forward_headers: [x-request-id]         # downstream headers copied upstream (default: none)
 *     drop_unsupported: [thinking]            # another dialect's fields this upstream may ignore (default: none)
 *     propagate_trace: true                   # send the tracing binding's trace context (default: false)
 *     http: { version: http/1.1, first_byte_timeout: 60s }
 * }</pre>
 *
 * {@link #toString()} never shows an API key.
 *
 * @param url            the upstream base URL, e.g. {@code https://api.openai.com/v1}; required
 * @param apiKey         the bearer token, or {@code null} for upstreams without authentication (or with {@code apiKeys})
 * @param apiKeys        bearer tokens used in turn, each request with one ({@link KeyPool}: a token the provider
 *                       answers with 401, 403 or 429 rests); empty when not given; not with {@code apiKey}, not blank,
 *                       each once
 * @param organization   the {@code OpenAI-Organization} header value, or {@code null}
 * @param project        the {@code OpenAI-Project} header value, or {@code null}
 * @param forwardHeaders names of downstream headers to copy upstream, case-insensitive; never credentials
 * @param http           connection settings, or {@code null} for the defaults
 * @param path           the request path appended to {@code url}; default {@value #DEFAULT_PATH}
 * @param dropUnsupported names of other dialects' request fields (e.g. Anthropic's {@code thinking}) that may be
 *                       dropped when translating to OpenAI; any other such field is refused with a 400 naming it
 * @param propagateTrace whether to send the exchange's {@code traceparent} ({@link
 *                       dev.sluice.api.exchange.Attributes#TRACEPARENT}, set by a tracing binding) to the upstream;
 *                       default {@code false}: nothing about the trace leaves the gateway
 */
public record OpenAiClientOptions(String url, String apiKey, List<String> apiKeys, String organization, String project,
                                  List<String> forwardHeaders, HttpOptionsConfig http, String path,
                                  List<String> dropUnsupported, Boolean propagateTrace) implements ClientOptions
{
    /** OpenAI's path below the {@code /v1} base URL. */
    public static final String DEFAULT_PATH = "/chat/completions";

    /**
     * Headers that are the gateway's to set: the client's credentials must never reach a provider, and framing
     * headers belong to the HTTP client.
     */
    private static final Set<String> NOT_FORWARDABLE = ForwardHeaders.NEVER;

    public OpenAiClientOptions
    {
        apiKeys = KeyPool.checkOptions(apiKey, apiKeys);
        apiKey = blankToNull(apiKey);
        organization = blankToNull(organization);
        project = blankToNull(project);
        path = Options.path(path, DEFAULT_PATH);
        forwardHeaders = forwardHeaders == null ? List.of() : ForwardHeaders.checkOptions(forwardHeaders, NOT_FORWARDABLE);
        dropUnsupported = dropUnsupported == null ? List.of() : List.copyOf(dropUnsupported);
        propagateTrace = Boolean.TRUE.equals(propagateTrace);
    }

    private static String blankToNull(String s)
    {
        return s == null || s.isBlank() ? null : s;
    }

    @Override
    public String toString()
    {
        return "OpenAiClientOptions[url=" + url + ", apiKey=" + (apiKey == null ? "none" : "***")
            + ", apiKeys=" + (apiKeys.isEmpty() ? "none" : apiKeys.size() + " keys")
            + ", organization=" + organization + ", project=" + project + ", forwardHeaders=" + forwardHeaders
            + ", http=" + http + ", path=" + path + ", dropUnsupported=" + dropUnsupported
            + ", propagateTrace=" + propagateTrace + "]";
    }
}
