package dev.sluice.plugin.gemini;

import dev.sluice.support.config.HttpOptionsConfig;
import dev.sluice.support.dialect.ClientOptions;
import dev.sluice.support.upstream.ForwardHeaders;
import dev.sluice.support.upstream.KeyPool;

import java.util.List;
import java.util.Set;

/**
 * Options of a {@code gemini} client binding.
 *
 * <pre>{@code
 * south_gemini:
 *   type: gemini
 *   kind: client
 *   options:
 *     url: https://generativelanguage.googleapis.com/v1beta   # the base URL; /models/{model}:... is appended
 *     api_key: "${{env.GEMINI_API_KEY}}"                       # sent as x-goog-api-key, never as ?key=
 *     # instead of api_key: keys used in turn; a rejected key rests 60 s, one answered 429 until its retryDelay
 *     # api_keys: [ "${{env.GEMINI_KEY_1}}", "${{env.GEMINI_KEY_2}}" ]
 *     forward_headers: [x-request-id]                          # downstream headers copied upstream (default: none)
 *     drop_unsupported: [store]                                # another dialect's fields this upstream may ignore
 *     propagate_trace: true                                    # send the tracing binding's trace context (default: false)
 *     http: { version: http/1.1, first_byte_timeout: 60s }
 * }</pre>
 *
 * {@link #toString()} never shows an API key.
 *
 * @param url             the upstream base URL; required (Google's is {@value #GOOGLE_URL})
 * @param apiKey          the Gemini API key, or {@code null} for upstreams without authentication (or with
 *                        {@code apiKeys})
 * @param apiKeys         Gemini API keys used in turn, each request with one ({@link KeyPool}: a key the provider
 *                        rejects or answers with 429 rests); empty when not given; not with {@code apiKey}, not blank,
 *                        each once
 * @param forwardHeaders  names of downstream headers to copy upstream, case-insensitive; never credentials
 * @param dropUnsupported names of other dialects' request fields (e.g. OpenAI's {@code store}) that may be dropped
 *                        when translating to Gemini; any other such field is refused with a 400 naming it
 * @param http            connection settings, or {@code null} for the defaults
 * @param propagateTrace  whether to send the exchange's {@code traceparent} ({@link
 *                        dev.sluice.api.exchange.Attributes#TRACEPARENT}, set by a tracing binding) to the upstream;
 *                        default {@code false}: nothing about the trace leaves the gateway
 */
public record GeminiClientOptions(String url, String apiKey, List<String> apiKeys, List<String> forwardHeaders,
                                  List<String> dropUnsupported, HttpOptionsConfig http, Boolean propagateTrace)
    implements ClientOptions
{
    /** The Gemini API's base URL, for configs. */
    public static final String GOOGLE_URL = "https://generativelanguage.googleapis.com/v1beta";

    /**
     * Headers that are the gateway's to set: the client's credentials must never reach a provider, and framing
     * headers belong to the HTTP client.
     */
    private static final Set<String> NOT_FORWARDABLE = ForwardHeaders.NEVER;

    public GeminiClientOptions
    {
        apiKeys = KeyPool.checkOptions(apiKey, apiKeys);
        apiKey = apiKey == null || apiKey.isBlank() ? null : apiKey;
        forwardHeaders = forwardHeaders == null ? List.of() : ForwardHeaders.checkOptions(forwardHeaders, NOT_FORWARDABLE);
        dropUnsupported = dropUnsupported == null ? List.of() : List.copyOf(dropUnsupported);
        propagateTrace = Boolean.TRUE.equals(propagateTrace);
    }

    @Override
    public String toString()
    {
        return "GeminiClientOptions[url=" + url + ", apiKey=" + (apiKey == null ? "none" : "***") + ", apiKeys="
            + (apiKeys.isEmpty() ? "none" : apiKeys.size() + " keys") + ", forwardHeaders=" + forwardHeaders
            + ", dropUnsupported=" + dropUnsupported + ", http=" + http + ", propagateTrace=" + propagateTrace + "]";
    }
}
