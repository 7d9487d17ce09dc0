package dev.sluice.plugin.openai;

import com.fasterxml.jackson.core.JsonGenerator;
import dev.sluice.api.GatewayException;
import dev.sluice.api.codec.StreamEncoder;
import dev.sluice.api.model.ChatRequest;
import dev.sluice.api.model.StreamEvent;
import dev.sluice.api.model.Usage;
import dev.sluice.support.json.JsonOutput;
import dev.sluice.support.sse.EventFrame;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.function.Supplier;

/**
 * Canonical events to {@code chat.completion.chunk} SSE, in the shapes OpenAI sends: the first chunk carries
 * {@code delta.role}; a tool call's first delta carries {@code id}, {@code type}, {@code function.name} and empty
 * {@code arguments}, later ones only {@code index} and an {@code arguments} fragment; {@code Stop} is a chunk with
 * {@code finish_reason}; {@code UsageReport} is a chunk with {@code "choices": []} and {@code usage}. Block starts
 * and stops have no wire form (an empty buffer). Every chunk repeats the {@code MessageStart}'s id, model and
 * created.
 *
 * <p>Usage follows {@code stream_options.include_usage} as OpenAI does: without it no chunk carries usage; with it
 * one chunk with {@code "choices": []} and {@code usage} follows the finish chunk, whether the usage came with the
 * {@code Stop} (Anthropic, Gemini) or as a later {@code UsageReport} (OpenAI). The client's request is decoded only
 * when a canonical event needs it, so a relayed stream (raw frames, errors) never decodes it.
 */
final class OpenAiStreamEncoder implements StreamEncoder
{
    private static final byte[] DATA = "data: ".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] EVENT_END = "\n\n".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] DONE = "data: [DONE]\n\n".getBytes(StandardCharsets.US_ASCII);
    private static final ByteBuffer EMPTY = ByteBuffer.allocate(0);

    /** Writes the {@code delta} object's fields. */
    @FunctionalInterface
    private interface Delta
    {
        void write(JsonGenerator g) throws IOException;
    }

    private final Supplier<ChatRequest> request;
    private int includeUsage = -1;
    private boolean usageSent;
    private String id = "";
    private String model = "";
    private long created;

    OpenAiStreamEncoder(Supplier<ChatRequest> request)
    {
        this.request = request;
    }

    private boolean includeUsage()
    {
        if (includeUsage < 0)
            includeUsage = request.get().includeUsage() ? 1 : 0;
        return includeUsage == 1;
    }

    @Override
    public ByteBuffer encode(StreamEvent event)
    {
        if (event instanceof StreamEvent.MessageStart start)
        {
            id = start.id();
            model = start.model();
            created = start.created();
            return chunk(g ->
            {
                g.writeStringField("role", "assistant");
                g.writeStringField("content", "");
                g.writeNullField("refusal");
            }, null, null);
        }
        if (event instanceof StreamEvent.TextDelta delta)
        {
            if (delta.text().isEmpty())
                return empty();
            return chunk(g -> g.writeStringField("content", delta.text()), null, null);
        }
        if (event instanceof StreamEvent.ThinkingDelta delta)
        {
            // Signatures have no Chat Completions form; reasoning text uses the compatible-server convention.
            if (delta.text() == null || delta.text().isEmpty())
                return empty();
            return chunk(g -> g.writeStringField("reasoning_content", delta.text()), null, null);
        }
        if (event instanceof StreamEvent.ToolCallStart start)
        {
            return chunk(g ->
            {
                g.writeArrayFieldStart("tool_calls");
                g.writeStartObject();
                g.writeNumberField("index", start.toolIndex());
                g.writeStringField("id", start.id());
                g.writeStringField("type", "function");
                g.writeObjectFieldStart("function");
                g.writeStringField("name", start.name());
                g.writeStringField("arguments", "");
                g.writeEndObject();
                g.writeEndObject();
                g.writeEndArray();
            }, null, null);
        }
        if (event instanceof StreamEvent.ToolCallDelta delta)
        {
            if (delta.argumentsDelta().isEmpty())
                return empty();
            return chunk(g ->
            {
                g.writeArrayFieldStart("tool_calls");
                g.writeStartObject();
                g.writeNumberField("index", delta.toolIndex());
                g.writeObjectFieldStart("function");
                g.writeStringField("arguments", delta.argumentsDelta());
                g.writeEndObject();
                g.writeEndObject();
                g.writeEndArray();
            }, null, null);
        }
        if (event instanceof StreamEvent.Stop stop)
        {
            String finishReason = OpenAiResponses.finishReason(stop.reason(), stop.rawReason());
            ByteBuffer finish = chunk(g -> { }, finishReason, null);
            if (Usage.ZERO.equals(stop.usage()) || usageSent || !includeUsage())
                return finish;
            usageSent = true;
            ByteBuffer usage = usageChunk(stop.usage());
            ByteBuffer both = ByteBuffer.allocate(finish.remaining() + usage.remaining());
            return both.put(finish).put(usage).flip();
        }
        if (event instanceof StreamEvent.UsageReport report)
        {
            if (usageSent || !includeUsage())
                return empty();
            usageSent = true;
            return usageChunk(report.usage());
        }
        if (event instanceof StreamEvent.Error error)
            return error(error.error());
        // TextStart, ThinkingStart and BlockStop: Chat Completions has no block boundaries.
        return empty();
    }

    @Override
    public ByteBuffer end()
    {
        return ByteBuffer.wrap(DONE);
    }

    @Override
    public ByteBuffer error(GatewayException error)
    {
        return EventFrame.of(DATA, OpenAiErrors.encode(error), EVENT_END);
    }

    @Override
    public String contentType()
    {
        return "text/event-stream";
    }

    private ByteBuffer chunk(Delta delta, String finishReason, Usage usage)
    {
        return event(g ->
        {
            writeHead(g);
            g.writeArrayFieldStart("choices");
            g.writeStartObject();
            g.writeNumberField("index", 0);
            g.writeObjectFieldStart("delta");
            delta.write(g);
            g.writeEndObject();
            g.writeNullField("logprobs");
            if (finishReason == null)
                g.writeNullField("finish_reason");
            else
                g.writeStringField("finish_reason", finishReason);
            g.writeEndObject();
            g.writeEndArray();
            if (usage != null)
            {
                g.writeFieldName("usage");
                OpenAiResponses.writeUsage(g, usage, null);
            }
            g.writeEndObject();
        });
    }

    private ByteBuffer usageChunk(Usage usage)
    {
        return event(g ->
        {
            writeHead(g);
            g.writeArrayFieldStart("choices");
            g.writeEndArray();
            g.writeFieldName("usage");
            OpenAiResponses.writeUsage(g, usage, null);
            g.writeEndObject();
        });
    }

    private void writeHead(JsonGenerator g) throws IOException
    {
        g.writeStartObject();
        g.writeStringField("id", id);
        g.writeStringField("object", "chat.completion.chunk");
        g.writeNumberField("created", created);
        g.writeStringField("model", model);
    }

    private static ByteBuffer event(JsonOutput.Body body)
    {
        return EventFrame.of(DATA, body, EVENT_END);
    }

    private static ByteBuffer empty()
    {
        return EMPTY.duplicate();
    }
}
