package dev.sluice.plugin.anthropic;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.JsonNode;
import dev.sluice.api.model.Usage;
import dev.sluice.support.json.Json;
import dev.sluice.support.json.JsonInput;

import java.io.IOException;

/**
 * Anthropic's {@code usage} counts as reported, each {@code null} when the object did not carry it: a stream reports
 * input counts in {@code message_start} and (cumulative) output counts, sometimes input counts again, in
 * {@code message_delta}, so the two are {@linkplain #merge merged} field by field.
 *
 * <p>Anthropic's {@code input_tokens} excludes the cache: the canonical {@link Usage#inputTokens()} is
 * {@code input_tokens + cache_read_input_tokens + cache_creation_input_tokens}, and encoding goes the other way
 * ({@link #uncachedInput}). {@code output_tokens_details.thinking_tokens} is the canonical reasoning count.
 *
 * @param input         {@code input_tokens} (uncached input)
 * @param cacheRead     {@code cache_read_input_tokens}
 * @param cacheCreation {@code cache_creation_input_tokens}
 * @param output        {@code output_tokens}
 * @param thinking      {@code output_tokens_details.thinking_tokens}
 */
record AnthropicUsage(Long input, Long cacheRead, Long cacheCreation, Long output, Long thinking)
{
    /** Nothing reported. */
    static final AnthropicUsage NONE = new AnthropicUsage(null, null, null, null, null);

    /** @return these counts with every count {@code later} reports replacing this one's */
    AnthropicUsage merge(AnthropicUsage later)
    {
        if (later == null)
            return this;
        return new AnthropicUsage(later.input != null ? later.input : input,
            later.cacheRead != null ? later.cacheRead : cacheRead,
            later.cacheCreation != null ? later.cacheCreation : cacheCreation,
            later.output != null ? later.output : output,
            later.thinking != null ? later.thinking : thinking);
    }

    /** @return the canonical usage: input including cache reads and writes */
    Usage toUsage()
    {
        long totalInput = n(input) + n(cacheRead) + n(cacheCreation);
        return new Usage(totalInput, n(output), n(cacheRead), n(cacheCreation), n(thinking));
    }

    private static long n(Long value)
    {
        return value == null ? 0 : value;
    }

    /** @return the counts of a {@code usage} object read as a tree ({@code null}: none reported) */
    static AnthropicUsage of(JsonNode usage, JsonInput in, String path)
    {
        if (usage == null)
            return NONE;
        in.object(usage, path);
        JsonNode details = JsonInput.field(usage, "output_tokens_details");
        Long thinking = null;
        if (details != null)
            thinking = in.optLong(in.object(details, path + ".output_tokens_details"), "thinking_tokens",
                path + ".output_tokens_details.thinking_tokens");
        return new AnthropicUsage(in.optLong(usage, "input_tokens", path + ".input_tokens"),
            in.optLong(usage, "cache_read_input_tokens", path + ".cache_read_input_tokens"),
            in.optLong(usage, "cache_creation_input_tokens", path + ".cache_creation_input_tokens"),
            in.optLong(usage, "output_tokens", path + ".output_tokens"), thinking);
    }

    /** @return Anthropic's {@code input_tokens} for a canonical usage: input without cache reads or writes, >= 0 */
    static long uncachedInput(Usage usage)
    {
        return Math.max(0, usage.inputTokens() - usage.cachedInputTokens() - usage.cacheCreationTokens());
    }

    /**
     * Writes {@code usage} as Anthropic's object: the four token counts, and {@code output_tokens_details} when
     * reasoning was counted.
     *
     * @param withInput whether to write the input counts (a {@code message_delta} carries them only when known)
     */
    static void write(JsonGenerator g, Usage usage, boolean withInput) throws IOException
    {
        g.writeStartObject();
        if (withInput)
        {
            g.writeNumberField("input_tokens", uncachedInput(usage));
            g.writeNumberField("cache_creation_input_tokens", usage.cacheCreationTokens());
            g.writeNumberField("cache_read_input_tokens", usage.cachedInputTokens());
        }
        g.writeNumberField("output_tokens", usage.outputTokens());
        if (usage.reasoningTokens() > 0)
        {
            g.writeObjectFieldStart("output_tokens_details");
            g.writeNumberField("thinking_tokens", usage.reasoningTokens());
            g.writeEndObject();
        }
        g.writeEndObject();
    }

    /**
     * Scans a JSON object with a streaming parser for its usage: a top-level {@code usage} (a response body, a
     * {@code message_delta} event) or {@code message.usage} (a {@code message_start} event). Everything else is
     * skipped without building a tree.
     *
     * @return the counts, or {@code null} if there are none or the bytes are not a readable object
     */
    static AnthropicUsage scan(byte[] json, int offset, int length)
    {
        if (json == null || length == 0)
            return null;
        try (JsonParser parser = Json.FACTORY.createParser(json, offset, length))
        {
            if (parser.nextToken() != JsonToken.START_OBJECT)
                return null;
            return scanObject(parser, true);
        }
        catch (IOException e)
        {
            // A scan feeds accounting only; what it cannot read is relayed as it is.
            return null;
        }
    }

    private static AnthropicUsage scanObject(JsonParser parser, boolean top) throws IOException
    {
        AnthropicUsage found = null;
        while (parser.nextToken() == JsonToken.FIELD_NAME)
        {
            String name = parser.currentName();
            JsonToken value = parser.nextToken();
            if (value == JsonToken.START_OBJECT && "usage".equals(name))
                found = readUsage(parser);
            else if (value == JsonToken.START_OBJECT && top && "message".equals(name))
                found = scanObject(parser, false);
            else
                parser.skipChildren();
        }
        return found;
    }

    private static AnthropicUsage readUsage(JsonParser parser) throws IOException
    {
        Long input = null;
        Long cacheRead = null;
        Long cacheCreation = null;
        Long output = null;
        Long thinking = null;
        while (parser.nextToken() == JsonToken.FIELD_NAME)
        {
            String name = parser.currentName();
            JsonToken value = parser.nextToken();
            switch (name)
            {
                case "input_tokens" -> input = count(parser, value);
                case "cache_read_input_tokens" -> cacheRead = count(parser, value);
                case "cache_creation_input_tokens" -> cacheCreation = count(parser, value);
                case "output_tokens" -> output = count(parser, value);
                case "output_tokens_details" -> thinking = thinkingTokens(parser, value);
                default -> parser.skipChildren();
            }
        }
        return new AnthropicUsage(input, cacheRead, cacheCreation, output, thinking);
    }

    private static Long thinkingTokens(JsonParser parser, JsonToken value) throws IOException
    {
        if (value != JsonToken.START_OBJECT)
        {
            parser.skipChildren();
            return null;
        }
        Long result = null;
        while (parser.nextToken() == JsonToken.FIELD_NAME)
        {
            String name = parser.currentName();
            JsonToken v = parser.nextToken();
            if ("thinking_tokens".equals(name))
                result = count(parser, v);
            else
                parser.skipChildren();
        }
        return result;
    }

    private static Long count(JsonParser parser, JsonToken value) throws IOException
    {
        if (value == JsonToken.VALUE_NUMBER_INT)
            return parser.getLongValue();
        parser.skipChildren();
        return null;
    }
}
