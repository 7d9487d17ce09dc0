package dev.sluice.examples.ollama;

import dev.sluice.support.config.HttpOptionsConfig;
import dev.sluice.support.config.Options;
import dev.sluice.support.dialect.ClientOptions;
import dev.sluice.support.upstream.ForwardHeaders;

import java.util.List;
import java.util.Set;

/**
 * Options of an {@code ollama} client binding.
 *
 * <pre>{@code
 * south_ollama:
 *   type: ollama
 *   kind: client
 *   options:
 *     url: http://127.0.0.1:11434            # the base URL; path is appended
 *     path: /api/chat                        # the default
 *     api_key: "${{env.OLLAMA_API_KEY}}"     # optional, for a hosted Ollama: Authorization: Bearer ...
 *     forward_headers: [x-request-id]        # downstream headers copied upstream (default: none)
 *     drop_unsupported: [store, options.num_ctx]  # other dialects' fields this upstream may ignore (default: none)
 *     http: { version: http/1.1, first_byte_timeout: 120s }
 * }</pre>
 *
 * {@link #toString()} never shows the API key.
 *
 * @param url             the upstream base URL, e.g. {@code http://127.0.0.1:11434}; required
 * @param apiKey          a bearer token, or {@code null} for a local Ollama, which has no authentication
 * @param forwardHeaders  names of downstream headers to copy upstream, case-insensitive; never credentials
 * @param http            connection settings, or {@code null} for the defaults
 * @param path            the request path appended to {@code url}; default {@value #DEFAULT_PATH}
 * @param dropUnsupported names of another dialect's request fields (e.g. OpenAI's {@code store}) that may be
 *                        dropped when translating to Ollama; any other such field is refused with a 400 naming it
 */
public record OllamaClientOptions(String url, String apiKey, List<String> forwardHeaders, HttpOptionsConfig http,
                                  String path, List<String> dropUnsupported) implements ClientOptions
{
    /** Ollama's chat path. */
    public static final String DEFAULT_PATH = "/api/chat";

    /**
     * Headers that are the gateway's to set: the client's credentials must never reach a provider, and framing
     * headers belong to the HTTP client.
     */
    private static final Set<String> NOT_FORWARDABLE = ForwardHeaders.NEVER;

    /** Fills defaults and checks the path, the header names and the field names. */
    public OllamaClientOptions
    {
        apiKey = apiKey == null || apiKey.isBlank() ? null : apiKey;
        path = Options.path(path, DEFAULT_PATH);
        forwardHeaders = forwardHeaders == null ? List.of() : ForwardHeaders.checkOptions(forwardHeaders, NOT_FORWARDABLE);
        if (dropUnsupported != null)
        {
            for (int i = 0; i < dropUnsupported.size(); i++)
            {
                if (dropUnsupported.get(i) == null || dropUnsupported.get(i).isBlank())
                {
                    throw new IllegalArgumentException("drop_unsupported[" + i
                        + "]: must not be blank (expected: a field name)");
                }
            }
        }
        dropUnsupported = dropUnsupported == null ? List.of() : List.copyOf(dropUnsupported);
    }

    @Override
    public String toString()
    {
        return "OllamaClientOptions[url=" + url + ", apiKey=" + (apiKey == null ? "none" : "***") + ", forwardHeaders="
            + forwardHeaders + ", http=" + http + ", path=" + path + ", dropUnsupported=" + dropUnsupported + "]";
    }
}
