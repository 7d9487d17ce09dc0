package dev.sluice.plugin.openai.responses;

import dev.sluice.plugin.openai.OpenAiClientOptions;
import dev.sluice.support.config.HttpOptionsConfig;
import dev.sluice.support.config.Options;
import dev.sluice.support.dialect.ClientOptions;

import java.util.List;

/**
 * Options of an {@code openai-responses} client binding: those of an {@code openai} client
 * ({@link OpenAiClientOptions}, checked the same way), with the Responses API's path.
 *
 * <pre>{@code
 * south_responses:
 *   type: openai-responses
 *   kind: client
 *   options:
 *     url: https://api.openai.com/v1          # the base URL; path is appended
 *     api_key: "${{env.OPENAI_API_KEY}}"      # sent as Authorization: Bearer ...
 *     drop_unsupported: [thinking, stop]      # other dialects' fields this upstream may ignore (default: none)
 * }</pre>
 *
 * {@link #toString()} never shows an API key.
 *
 * @param path the request path appended to {@code url}; default {@value #DEFAULT_PATH}
 * @param dropUnsupported names of fields another dialect's request may carry and the Responses API lacks (another
 *                        dialect's extensions such as Anthropic's {@code thinking}, and {@code stop},
 *                        {@code top_k}, {@code presence_penalty}, {@code frequency_penalty}, {@code seed}) that may be
 *                        dropped; any other is refused with a 400 naming it
 * @see OpenAiClientOptions for the other components
 */
public record ResponsesClientOptions(String url, String apiKey, List<String> apiKeys, String organization,
                                     String project, List<String> forwardHeaders, HttpOptionsConfig http, String path,
                                     List<String> dropUnsupported, Boolean propagateTrace) implements ClientOptions
{
    /** The Responses API's path below the {@code /v1} base URL. */
    public static final String DEFAULT_PATH = "/responses";

    public ResponsesClientOptions
    {
        OpenAiClientOptions checked = new OpenAiClientOptions(url, apiKey, apiKeys, organization, project,
            forwardHeaders, http, Options.path(path, DEFAULT_PATH), dropUnsupported, propagateTrace);
        apiKey = checked.apiKey();
        apiKeys = checked.apiKeys();
        organization = checked.organization();
        project = checked.project();
        forwardHeaders = checked.forwardHeaders();
        path = checked.path();
        dropUnsupported = checked.dropUnsupported();
        propagateTrace = checked.propagateTrace();
    }

    /** @return the same options as an {@code openai} client's, whose headers the Responses client sends */
    OpenAiClientOptions openAi()
    {
        return new OpenAiClientOptions(url, apiKey, apiKeys.isEmpty() ? null : apiKeys, organization, project,
            forwardHeaders, http, path, dropUnsupported, propagateTrace);
    }

    @Override
    public String toString()
    {
        return "ResponsesClientOptions" + openAi().toString().substring("OpenAiClientOptions".length());
    }
}
