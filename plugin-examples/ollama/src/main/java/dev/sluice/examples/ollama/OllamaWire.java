package dev.sluice.examples.ollama;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.sluice.api.ErrorKind;
import dev.sluice.api.GatewayException;
import dev.sluice.support.json.Json;
import dev.sluice.api.model.ChatResponse.StopReason;

import java.io.IOException;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.format.DateTimeParseException;

/**
 * Shapes of the Ollama wire format shared by the request, response and stream codecs: synthesized ids, timestamps,
 * stop reasons and tool-call arguments. Stateless.
 *
 * <p><b>Ids.</b> Ollama's messages and answers have no id, and older servers send tool calls without one. The
 * canonical model needs both, so the decoders synthesize deterministic ones: the answer is {@code ollama-<digits of
 * created_at>}, a tool call in an answer is {@code call_ollama_<digits of created_at>_<n>}, and a tool call in a
 * request's history is {@code call_ollama_<message index>_<n>}. Every synthesized tool-call id starts with
 * {@value #SYNTHETIC_ID_PREFIX}; the encoders leave such ids out again, so an Ollama request or answer that went
 * through canonical form comes out as it came in. A real id (newer Ollama servers send one) is kept and written.
 */
final class OllamaWire
{
    /** Every tool-call id this plugin makes up starts with this; such ids are never written to the wire. */
    static final String SYNTHETIC_ID_PREFIX = "call_ollama_";

    private OllamaWire()
    {
    }

    /** @return whether {@code id} was synthesized by this plugin rather than sent by a client or a server */
    static boolean synthetic(String id)
    {
        return id.startsWith(SYNTHETIC_ID_PREFIX);
    }

    /** @return the id of the answer created at {@code createdAt} ({@code null}: unknown) */
    static String answerId(String createdAt)
    {
        String digits = digits(createdAt);
        return digits.isEmpty() ? "ollama" : "ollama-" + digits;
    }

    /** @return the id of tool call {@code n} of the answer created at {@code createdAt} */
    static String answerToolCallId(String createdAt, int n)
    {
        String digits = digits(createdAt);
        return SYNTHETIC_ID_PREFIX + (digits.isEmpty() ? "" : digits + "_") + n;
    }

    /** @return the id of tool call {@code n} of the request's message {@code messageIndex} */
    static String requestToolCallId(int messageIndex, int n)
    {
        return SYNTHETIC_ID_PREFIX + messageIndex + "_" + n;
    }

    private static String digits(String text)
    {
        if (text == null)
            return "";
        StringBuilder b = new StringBuilder(24);
        for (int i = 0; i < text.length(); i++)
        {
            char c = text.charAt(i);
            if (c >= '0' && c <= '9')
                b.append(c);
        }
        return b.toString();
    }

    /**
     * @return the epoch second of an RFC 3339 {@code created_at}, or 0 if it is absent, unreadable or before 1970
     *         (Go's zero time): a timestamp is informative only, so it never fails an answer
     */
    static long epochSeconds(String createdAt)
    {
        if (createdAt == null)
            return 0;
        try
        {
            return Math.max(0, OffsetDateTime.parse(createdAt).toEpochSecond());
        }
        catch (DateTimeParseException e)
        {
            return 0;
        }
    }

    /** @return {@code created_at} for an answer created at epoch second {@code created}; now if that is unknown (0) */
    static String createdAt(long created)
    {
        return created > 0 ? Instant.ofEpochSecond(created).toString() : Instant.now().toString();
    }

    /**
     * Ollama's {@code done_reason} to the canonical reason. Ollama says {@code stop} after tool calls too (it has no
     * tool-use reason), so an answer that called tools stopped for {@link StopReason#TOOL_USE}. An absent reason
     * (servers before 0.1.33 sent none) is a normal end.
     */
    static StopReason stopReason(String doneReason, boolean calledTools)
    {
        if (doneReason == null || doneReason.isEmpty() || doneReason.equals("stop"))
            return calledTools ? StopReason.TOOL_USE : StopReason.END_TURN;
        return doneReason.equals("length") ? StopReason.MAX_TOKENS : StopReason.OTHER;
    }

    /**
     * The canonical reason to {@code done_reason}: {@code length} for the token cap, Ollama's own {@code load} and
     * {@code unload} kept when they are the raw value, and {@code stop} for everything else (a tool call, a stop
     * sequence, a content filter: Ollama has a word for none of them).
     */
    static String doneReason(StopReason reason, String raw)
    {
        if (reason == StopReason.MAX_TOKENS)
            return "length";
        if (reason == StopReason.OTHER && ("load".equals(raw) || "unload".equals(raw)))
            return raw;
        return "stop";
    }

    /** @return the JSON text of {@code arguments}, compact, exactly as canonical tool calls keep arguments */
    static String argumentsText(JsonNode arguments)
    {
        if (arguments == null)
            return "{}";
        try
        {
            return Json.MAPPER.writeValueAsString(arguments);
        }
        catch (JsonProcessingException e)
        {
            // A tree read from JSON always writes back; a failure is a bug.
            throw new GatewayException(ErrorKind.INTERNAL, "could not write tool call arguments", e);
        }
    }

    /**
     * Parses canonical tool-call arguments into the object Ollama requires: an empty text is an empty object, and
     * anything else must be exactly one JSON object.
     *
     * @return the object, or {@code null} if {@code arguments} is not one JSON object
     */
    static ObjectNode argumentsObject(String arguments)
    {
        if (arguments.isBlank())
            return Json.MAPPER.createObjectNode();
        try (JsonParser parser = Json.FACTORY.createParser(arguments))
        {
            if (parser.nextToken() != JsonToken.START_OBJECT)
                return null;
            JsonNode tree = Json.MAPPER.readTree(parser);
            return parser.nextToken() == null && tree instanceof ObjectNode o ? o : null;
        }
        catch (IOException e)
        {
            return null;
        }
    }

    /** @return the media type of base64 image data, sniffed from its first bytes, or {@code null} if unknown */
    static String sniffMediaType(String base64)
    {
        if (base64.startsWith("iVBORw0KGgo"))
            return "image/png";
        if (base64.startsWith("/9j/"))
            return "image/jpeg";
        if (base64.startsWith("R0lGOD"))
            return "image/gif";
        if (base64.startsWith("UklGR"))
            return "image/webp";
        return null;
    }
}
