package dev.sluice.plugin.openai.responses;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.util.ByteArrayBuilder;
import dev.sluice.api.GatewayException;
import dev.sluice.api.codec.StreamEncoder;
import dev.sluice.api.model.ChatResponse.StopReason;
import dev.sluice.api.model.StreamEvent;
import dev.sluice.api.model.Usage;
import dev.sluice.plugin.openai.responses.ResponseBodies.Head;
import dev.sluice.plugin.openai.responses.ResponseBodies.ItemKind;
import dev.sluice.plugin.openai.responses.ResponseBodies.OutputItem;
import dev.sluice.support.json.JsonOutput;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Canonical events to the Responses API's typed event stream, each event named ({@code event: <type>}) and numbered
 * ({@code sequence_number}, from 0), in the order OpenAI sends them:
 *
 * <ul>
 *   <li>{@code MessageStart}: {@code response.created} and {@code response.in_progress}.</li>
 *   <li>A text block is a {@code message} item: {@code response.output_item.added},
 *       {@code response.content_part.added}, one {@code response.output_text.delta} per delta, and at its stop
 *       {@code response.output_text.done}, {@code response.content_part.done}, {@code response.output_item.done}.</li>
 *   <li>A tool call block is a {@code function_call} item: added, {@code response.function_call_arguments.delta} per
 *       fragment, {@code response.function_call_arguments.done} and done.</li>
 *   <li>A thinking block is a {@code reasoning} item: its text a summary part
 *       ({@code response.reasoning_summary_part.added}, {@code response.reasoning_summary_text.delta}, their
 *       {@code .done} events), its signature the item's {@code encrypted_content}.</li>
 *   <li>The end ({@link #end()}): {@code response.completed}, or {@code response.incomplete} with
 *       {@code incomplete_details.reason} {@code max_output_tokens} or {@code content_filter}, carrying every item and
 *       the usage of {@code Stop} or the later {@code UsageReport}.</li>
 *   <li>An error: {@code response.failed} (status {@code failed}, {@code error.code} and {@code message}) once the
 *       response was created, else an {@code error} event (numbered after the provider's events when they were
 *       relayed: {@link RelayedStreamFailure}).</li>
 * </ul>
 *
 * Item ids are derived from the response id and the item's {@code output_index}. Not thread-safe: one per stream.
 */
final class ResponsesStreamEncoder implements StreamEncoder
{
    private static final byte[] EVENT = "event: ".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] DATA = "\ndata: ".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] EVENT_END = "\n\n".getBytes(StandardCharsets.US_ASCII);

    /** Writes an event's fields after its {@code type}. */
    @FunctionalInterface
    private interface Fields
    {
        void write(JsonGenerator g) throws IOException;
    }

    /** An output item being streamed. */
    private static final class Item
    {
        final ItemKind kind;
        final int outputIndex;
        final String id;
        final StringBuilder text = new StringBuilder();
        final String callId;
        final String name;
        String signature;
        boolean summaryOpen;

        Item(ItemKind kind, int outputIndex, String id, String callId, String name)
        {
            this.kind = kind;
            this.outputIndex = outputIndex;
            this.id = id;
            this.callId = callId;
            this.name = name;
        }

        OutputItem snapshot(boolean withText)
        {
            String t = withText ? text.toString() : null;
            return switch (kind)
            {
                case MESSAGE -> OutputItem.message(id, t);
                case FUNCTION_CALL -> OutputItem.functionCall(id, callId, name, withText ? t : "");
                case REASONING -> OutputItem.reasoning(id, withText ? t : null, withText ? signature : null);
            };
        }
    }

    private final Map<Integer, Item> open = new HashMap<>();
    private final List<OutputItem> done = new ArrayList<>();
    private int outputs;
    private long sequence;
    private Head head;
    private StopReason reason = StopReason.END_TURN;
    private Usage usage = Usage.ZERO;
    private ByteArrayBuilder out;

    @Override
    public ByteBuffer encode(StreamEvent event)
    {
        out = new ByteArrayBuilder(256);
        if (!(event instanceof StreamEvent.MessageStart) && !(event instanceof StreamEvent.Error))
            ensureStarted();
        if (event instanceof StreamEvent.MessageStart start)
        {
            head = new Head(ResponseBodies.responseId(start.id()), start.model(), start.created());
            // The input tokens some providers report at the start stand until the stop reports more.
            usage = start.usage();
            writeCreated();
        }
        else if (event instanceof StreamEvent.TextStart start)
        {
            text(start.index());
        }
        else if (event instanceof StreamEvent.TextDelta delta)
        {
            Item item = text(delta.index());
            if (!delta.text().isEmpty())
            {
                item.text.append(delta.text());
                event("response.output_text.delta", g ->
                {
                    itemFields(g, item);
                    g.writeNumberField("content_index", 0);
                    g.writeStringField("delta", delta.text());
                    g.writeArrayFieldStart("logprobs");
                    g.writeEndArray();
                });
            }
        }
        else if (event instanceof StreamEvent.ThinkingStart start)
        {
            reasoning(start.index());
        }
        else if (event instanceof StreamEvent.ThinkingDelta delta)
        {
            thinking(reasoning(delta.index()), delta);
        }
        else if (event instanceof StreamEvent.ToolCallStart start)
        {
            Item item = new Item(ItemKind.FUNCTION_CALL, outputs, itemId("fc"), start.id(), start.name());
            added(start.index(), item);
        }
        else if (event instanceof StreamEvent.ToolCallDelta delta)
        {
            Item item = open.get(delta.index());
            if (item != null && item.kind == ItemKind.FUNCTION_CALL && !delta.argumentsDelta().isEmpty())
            {
                item.text.append(delta.argumentsDelta());
                event("response.function_call_arguments.delta", g ->
                {
                    itemFields(g, item);
                    g.writeStringField("delta", delta.argumentsDelta());
                });
            }
        }
        else if (event instanceof StreamEvent.BlockStop stop)
        {
            Item item = open.remove(stop.index());
            if (item != null)
                finish(item);
        }
        else if (event instanceof StreamEvent.Stop stop)
        {
            finishAll();
            reason = stop.reason();
            if (!Usage.ZERO.equals(stop.usage()))
                usage = stop.usage();
        }
        else if (event instanceof StreamEvent.UsageReport report)
        {
            usage = report.usage();
        }
        else if (event instanceof StreamEvent.Error error)
        {
            return error(error.error());
        }
        return taken();
    }

    @Override
    public ByteBuffer end()
    {
        out = new ByteArrayBuilder(1024);
        ensureStarted();
        finishAll();
        String incomplete = ResponseBodies.incompleteReason(reason);
        String status = ResponseBodies.status(reason);
        event(incomplete == null ? "response.completed" : "response.incomplete",
            g -> response(g, status, incomplete, null, done, usage));
        return taken();
    }

    @Override
    public ByteBuffer error(GatewayException error)
    {
        out = new ByteArrayBuilder(256);
        if (head != null)
        {
            finishAll();
            event("response.failed", g -> response(g, "failed", null, error, done, usage));
        }
        else
        {
            // A relayed stream's events were the provider's: this one comes after them.
            if (error instanceof RelayedStreamFailure relayed)
                sequence = relayed.nextSequence();
            event("error", g ->
            {
                g.writeStringField("code", ResponsesErrors.code(error));
                g.writeStringField("message", error.getMessage());
                if (error.param() == null)
                    g.writeNullField("param");
                else
                    g.writeStringField("param", error.param());
            });
        }
        return taken();
    }

    @Override
    public String contentType()
    {
        return "text/event-stream";
    }

    private void writeCreated()
    {
        event("response.created", g -> response(g, "in_progress", null, null, List.of(), null));
        event("response.in_progress", g -> response(g, "in_progress", null, null, List.of(), null));
    }

    /** A stream that did not start with {@code MessageStart} (a broken upstream) still opens as OpenAI's does. */
    private void ensureStarted()
    {
        if (head != null)
            return;
        head = new Head(ResponseBodies.responseId(""), "", 0);
        writeCreated();
    }

    private Item text(int index)
    {
        Item item = open.get(index);
        if (item != null)
            return item;
        Item message = new Item(ItemKind.MESSAGE, outputs, itemId("msg"), null, null);
        added(index, message);
        event("response.content_part.added", g ->
        {
            itemFields(g, message);
            g.writeNumberField("content_index", 0);
            g.writeFieldName("part");
            ResponseBodies.writeOutputText(g, "");
        });
        return message;
    }

    private Item reasoning(int index)
    {
        Item item = open.get(index);
        if (item != null)
            return item;
        Item reasoning = new Item(ItemKind.REASONING, outputs, itemId("rs"), null, null);
        added(index, reasoning);
        return reasoning;
    }

    private void thinking(Item item, StreamEvent.ThinkingDelta delta)
    {
        if (delta.signature() != null)
            item.signature = delta.signature();
        if (delta.text() == null || delta.text().isEmpty())
            return;
        if (!item.summaryOpen)
        {
            item.summaryOpen = true;
            event("response.reasoning_summary_part.added", g ->
            {
                itemFields(g, item);
                g.writeNumberField("summary_index", 0);
                g.writeFieldName("part");
                ResponseBodies.writeSummaryText(g, "");
            });
        }
        item.text.append(delta.text());
        event("response.reasoning_summary_text.delta", g ->
        {
            itemFields(g, item);
            g.writeNumberField("summary_index", 0);
            g.writeStringField("delta", delta.text());
        });
    }

    private void added(int index, Item item)
    {
        outputs++;
        open.put(index, item);
        event("response.output_item.added", g ->
        {
            g.writeNumberField("output_index", item.outputIndex);
            g.writeFieldName("item");
            item.snapshot(false).write(g, false);
        });
    }

    private void finish(Item item)
    {
        String text = item.text.toString();
        switch (item.kind)
        {
            case MESSAGE ->
            {
                event("response.output_text.done", g ->
                {
                    itemFields(g, item);
                    g.writeNumberField("content_index", 0);
                    g.writeStringField("text", text);
                    g.writeArrayFieldStart("logprobs");
                    g.writeEndArray();
                });
                event("response.content_part.done", g ->
                {
                    itemFields(g, item);
                    g.writeNumberField("content_index", 0);
                    g.writeFieldName("part");
                    ResponseBodies.writeOutputText(g, text);
                });
            }
            case FUNCTION_CALL -> event("response.function_call_arguments.done", g ->
            {
                itemFields(g, item);
                g.writeStringField("name", item.name);
                g.writeStringField("arguments", text);
            });
            case REASONING ->
            {
                if (item.summaryOpen)
                {
                    event("response.reasoning_summary_text.done", g ->
                    {
                        itemFields(g, item);
                        g.writeNumberField("summary_index", 0);
                        g.writeStringField("text", text);
                    });
                    event("response.reasoning_summary_part.done", g ->
                    {
                        itemFields(g, item);
                        g.writeNumberField("summary_index", 0);
                        g.writeFieldName("part");
                        ResponseBodies.writeSummaryText(g, text);
                    });
                }
            }
            default -> throw new IllegalStateException("item " + item.kind);
        }
        OutputItem complete = item.snapshot(true);
        done.add(complete);
        event("response.output_item.done", g ->
        {
            g.writeNumberField("output_index", item.outputIndex);
            g.writeFieldName("item");
            complete.write(g, true);
        });
    }

    /** Finishes the open items in the order they were added. */
    private void finishAll()
    {
        if (open.isEmpty())
            return;
        List<Item> items = new ArrayList<>(open.values());
        items.sort((a, b) -> Integer.compare(a.outputIndex, b.outputIndex));
        open.clear();
        for (Item item : items)
            finish(item);
    }

    private void response(JsonGenerator g, String status, String incomplete, GatewayException error,
                          List<OutputItem> items, Usage usage) throws IOException
    {
        g.writeFieldName("response");
        ResponseBodies.writeResponse(g, head == null ? new Head(ResponseBodies.responseId(""), "", 0) : head, status,
            incomplete, error, items, usage, Map.of());
    }

    private static void itemFields(JsonGenerator g, Item item) throws IOException
    {
        g.writeStringField("item_id", item.id);
        g.writeNumberField("output_index", item.outputIndex);
    }

    private String itemId(String prefix)
    {
        return ResponseBodies.itemId(prefix, head == null ? "" : head.id(), outputs);
    }

    private void event(String type, Fields fields)
    {
        long number = sequence++;
        out.write(EVENT);
        out.write(type.getBytes(StandardCharsets.US_ASCII));
        out.write(DATA);
        JsonOutput.write(out, g ->
        {
            g.writeStartObject();
            g.writeStringField("type", type);
            fields.write(g);
            g.writeNumberField("sequence_number", number);
            g.writeEndObject();
        });
        out.write(EVENT_END);
    }

    private ByteBuffer taken()
    {
        ByteBuffer bytes = ByteBuffer.wrap(out.toByteArray());
        out = null;
        return bytes;
    }
}
