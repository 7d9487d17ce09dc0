package dev.sluice.api.model;

import com.fasterxml.jackson.databind.JsonNode;

import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * The provider-neutral chat request. Dialect codecs decode into it and encode from it; bindings that need the
 * content (guardrails, caches keyed on content) read it through {@code Exchange.request()}.
 *
 * <p>Fields a dialect has and this model does not cover travel in {@code extensions} as raw JSON under the
 * dialect's own field name; a codec of the same dialect writes them back, another dialect ignores them unless it
 * knows the field.
 *
 * <pre>{@code
 * ChatRequest request = exchange.request();                       // decodes the body on first call
 * for (Message m : request.messages())
 *     for (ContentPart part : m.content())
 *         if (part instanceof ContentPart.Text t && t.text().contains(word)) refuse();
 * exchange.request(request.withModel("gpt-4o-mini"));             // a rewrite: the raw body is no longer forwarded
 * }</pre>
 *
 * @param model             the model as the client named it
 * @param system            the leading system prompt, as parts (empty: none)
 * @param messages          the turns, in order
 * @param tools             tools the model may call (empty: none)
 * @param toolChoice        how tools may be used, or {@code null} for the provider's default
 * @param parallelToolCalls whether several tool calls may come in one turn, or {@code null}
 * @param sampling          sampling parameters
 * @param responseFormat    the required answer shape, or {@code null}
 * @param stream            whether the client asked for a stream
 * @param includeUsage      whether a streamed answer must report usage
 * @param user              an end-user id for abuse tracking, or {@code null}
 * @param metadata          string metadata (empty: none)
 * @param extensions        dialect fields the model does not cover, raw
 */
public record ChatRequest(String model, List<ContentPart> system, List<Message> messages, List<Tool> tools,
                          ToolChoice toolChoice, Boolean parallelToolCalls, Sampling sampling,
                          ResponseFormat responseFormat, boolean stream, boolean includeUsage, String user,
                          Map<String, String> metadata, Map<String, JsonNode> extensions)
{
    public ChatRequest
    {
        Objects.requireNonNull(model, "model");
        system = List.copyOf(system);
        messages = List.copyOf(messages);
        tools = List.copyOf(tools);
        sampling = sampling == null ? Sampling.DEFAULTS : sampling;
        metadata = metadata == null ? Map.of() : Map.copyOf(metadata);
        extensions = extensions == null ? Map.of() : Map.copyOf(extensions);
    }

    /** @return a copy naming another model */
    public ChatRequest withModel(String newModel)
    {
        return new ChatRequest(newModel, system, messages, tools, toolChoice, parallelToolCalls, sampling, responseFormat,
            stream, includeUsage, user, metadata, extensions);
    }

    /**
     * The shape the answer must have.
     *
     * @param type   text, any JSON object, or JSON matching {@code schema}
     * @param name   the schema's name ({@code JSON_SCHEMA} only), or {@code null}
     * @param schema the JSON schema, forwarded intact, or {@code null}
     * @param strict strict adherence, or {@code null}
     */
    public record ResponseFormat(Type type, String name, JsonNode schema, Boolean strict)
    {
        /** The kinds of format. */
        public enum Type
        {
            TEXT, JSON_OBJECT, JSON_SCHEMA
        }

        public ResponseFormat
        {
            Objects.requireNonNull(type, "type");
        }
    }

    /**
     * Sampling parameters; every field is optional ({@code null}: the provider's default).
     *
     * @param maxTokens the cap on generated tokens (OpenAI {@code max_tokens}/{@code max_completion_tokens},
     *                  Anthropic {@code max_tokens})
     * @param stop      stop sequences (empty: none)
     */
    public record Sampling(Double temperature, Double topP, Integer topK, Integer maxTokens, List<String> stop,
                           Double presencePenalty, Double frequencyPenalty, Long seed)
    {
        /** No parameters set. */
        public static final Sampling DEFAULTS = new Sampling(null, null, null, null, List.of(), null, null, null);

        public Sampling
        {
            stop = stop == null ? List.of() : List.copyOf(stop);
        }
    }

    /** How the model may use tools. */
    public sealed interface ToolChoice permits ToolChoice.Auto, ToolChoice.None, ToolChoice.Required, ToolChoice.Named
    {
        /** The model decides. */
        record Auto() implements ToolChoice
        {
        }

        /** The model must not call tools. */
        record None() implements ToolChoice
        {
        }

        /** The model must call at least one tool. */
        record Required() implements ToolChoice
        {
        }

        /** The model must call this tool. */
        record Named(String name) implements ToolChoice
        {
            public Named
            {
                Objects.requireNonNull(name, "name");
            }
        }
    }
}
