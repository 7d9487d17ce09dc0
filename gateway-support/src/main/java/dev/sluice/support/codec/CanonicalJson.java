package dev.sluice.support.codec;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonSubTypes;
import com.fasterxml.jackson.annotation.JsonTypeInfo;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import dev.sluice.api.model.ChatRequest;
import dev.sluice.api.model.ChatResponse;
import dev.sluice.api.model.ContentPart;
import dev.sluice.support.json.Json;

import java.io.IOException;

/**
 * The canonical model as compact JSON, for a store that keeps requests and answers outside the process (a response
 * cache's shared level, a conversation store in Redis): every field of {@link ChatRequest} and {@link ChatResponse}
 * (extensions, the response's dialect, thinking signatures, tool-call ids included), written and read back to an equal
 * record. Content parts and tool choices carry a short kind ({@code "k":"text"}); absent (null) fields are left out.
 *
 * <p>The form has no version of its own: a store puts its own version before it, and reads a form it does not know as
 * absent. Fields the model gains are read as their defaults from what an older gateway wrote; unknown fields are
 * ignored.
 *
 * <p>Thread-safe; the mapper is built once.
 *
 * <pre>{@code
 * byte[] bytes = CanonicalJson.write(response);
 * ChatResponse same = CanonicalJson.readResponse(bytes);      // throws IOException on what is not one
 * }</pre>
 */
public final class CanonicalJson
{
    private static final ObjectMapper MAPPER = JsonMapper.builder(Json.FACTORY)
        .disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
        .serializationInclusion(JsonInclude.Include.NON_NULL)
        .addMixIn(ContentPart.class, PartKinds.class)
        .addMixIn(ChatRequest.ToolChoice.class, ChoiceKinds.class)
        .build();

    @JsonTypeInfo(use = JsonTypeInfo.Id.NAME, include = JsonTypeInfo.As.PROPERTY, property = "k")
    @JsonSubTypes({
        @JsonSubTypes.Type(value = ContentPart.Text.class, name = "text"),
        @JsonSubTypes.Type(value = ContentPart.Image.class, name = "image"),
        @JsonSubTypes.Type(value = ContentPart.ToolCall.class, name = "tool_call"),
        @JsonSubTypes.Type(value = ContentPart.ToolResult.class, name = "tool_result"),
        @JsonSubTypes.Type(value = ContentPart.Thinking.class, name = "thinking")})
    private interface PartKinds
    {
    }

    @JsonTypeInfo(use = JsonTypeInfo.Id.NAME, include = JsonTypeInfo.As.PROPERTY, property = "k")
    @JsonSubTypes({
        @JsonSubTypes.Type(value = ChatRequest.ToolChoice.Auto.class, name = "auto"),
        @JsonSubTypes.Type(value = ChatRequest.ToolChoice.None.class, name = "none"),
        @JsonSubTypes.Type(value = ChatRequest.ToolChoice.Required.class, name = "required"),
        @JsonSubTypes.Type(value = ChatRequest.ToolChoice.Named.class, name = "named")})
    private interface ChoiceKinds
    {
    }

    private CanonicalJson()
    {
    }

    /** @return {@code request} as compact JSON */
    public static byte[] write(ChatRequest request)
    {
        return bytes(request);
    }

    /** @return {@code response} as compact JSON */
    public static byte[] write(ChatResponse response)
    {
        return bytes(response);
    }

    /** @throws IOException if {@code bytes} (from {@code offset}) are not a request this class wrote */
    public static ChatRequest readRequest(byte[] bytes, int offset, int length) throws IOException
    {
        return read(bytes, offset, length, ChatRequest.class);
    }

    /** @throws IOException if {@code bytes} (from {@code offset}) are not a response this class wrote */
    public static ChatResponse readResponse(byte[] bytes, int offset, int length) throws IOException
    {
        return read(bytes, offset, length, ChatResponse.class);
    }

    private static byte[] bytes(Object value)
    {
        try
        {
            return MAPPER.writeValueAsBytes(value);
        }
        catch (JsonProcessingException e)
        {
            // Records of strings, numbers and JSON trees always write.
            throw new IllegalStateException("cannot write the canonical model", e);
        }
    }

    private static <T> T read(byte[] bytes, int offset, int length, Class<T> type) throws IOException
    {
        try
        {
            T value = MAPPER.readValue(bytes, offset, length, type);
            if (value == null)
                throw new IOException("no " + type.getSimpleName());
            return value;
        }
        catch (IllegalArgumentException | NullPointerException invalid)
        {
            // A record's constructor refused what was read (a required field missing).
            throw new IOException("not a " + type.getSimpleName() + ": " + invalid.getMessage(), invalid);
        }
    }
}
