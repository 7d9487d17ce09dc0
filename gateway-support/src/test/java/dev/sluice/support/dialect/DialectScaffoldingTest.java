package dev.sluice.support.dialect;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.sluice.api.ErrorKind;
import dev.sluice.api.GatewayException;
import dev.sluice.api.model.StreamEvent;
import dev.sluice.support.json.Json;
import dev.sluice.support.json.JsonInput;
import dev.sluice.support.json.JsonScan;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The pieces a dialect is built from, on their own: what the four dialects' tests check through their codecs. */
class DialectScaffoldingTest
{
    private enum Kind
    {
        TEXT, THINKING
    }

    /** A dialect whose lines are {@code {"text": …}}, ended by {@code {"done": true}}, failed by {@code {"error": …}}. */
    private static final class LinesDecoder extends JsonStreamDecoder
    {
        private final Blocks<Kind> blocks = new Blocks<>(this::emit);
        private boolean done;

        LinesDecoder(Framing framing, int max)
        {
            super(framing, max);
        }

        @Override
        public boolean complete()
        {
            return done;
        }

        @Override
        protected GatewayException error(String event, ObjectNode data)
        {
            return data.has("error") ? new GatewayException(ErrorKind.UPSTREAM_ERROR, data.get("error").asText()) : null;
        }

        @Override
        protected void onObject(String event, ObjectNode data)
        {
            if (data.has("thinking"))
                emit(new StreamEvent.ThinkingDelta(blocks.ensure(Kind.THINKING, StreamEvent.ThinkingStart::new),
                    data.get("thinking").asText(), null));
            if (data.has("text"))
                emit(new StreamEvent.TextDelta(blocks.ensure(Kind.TEXT, StreamEvent.TextStart::new), JsonInput.STREAM.text(
                    data, "text", "text")));
            if (data.path("done").asBoolean())
            {
                blocks.close();
                done = true;
            }
        }
    }

    private static List<StreamEvent> decode(JsonStreamDecoder decoder, String... chunks)
    {
        List<StreamEvent> events = new ArrayList<>();
        for (String chunk : chunks)
            decoder.decode(ByteBuffer.wrap(chunk.getBytes(StandardCharsets.UTF_8)), events::add);
        return events;
    }

    @Test
    void ndjsonLinesSplitAnywhereBecomeBlocksThatOpenAndStopByKind()
    {
        LinesDecoder decoder = new LinesDecoder(JsonStreamDecoder.Framing.NDJSON, 1024);
        List<StreamEvent> events = decode(decoder, "{\"thinking\":\"hm\"}\n{\"te", "xt\":\"a\"}\n\n{\"text\":\"b\"}\n",
            "{\"done\":true}");
        assertThat(events).containsExactly(new StreamEvent.ThinkingStart(0), new StreamEvent.ThinkingDelta(0, "hm", null),
            new StreamEvent.BlockStop(0), new StreamEvent.TextStart(1), new StreamEvent.TextDelta(1, "a"),
            new StreamEvent.TextDelta(1, "b"), new StreamEvent.BlockStop(1));
        assertThat(decoder.complete()).as("a last line without its newline counts when it is whole JSON").isTrue();
        assertThat(decode(decoder, "{\"text\":\"late\"}\n")).as("nothing after the end").isEmpty();
    }

    @Test
    void anErrorEventEndsTheStreamAndLaterEventsAreIgnored()
    {
        LinesDecoder decoder = new LinesDecoder(JsonStreamDecoder.Framing.SSE, 1024);
        List<StreamEvent> events = decode(decoder, "data: {\"text\":\"a\"}\n\ndata: {\"error\":\"overloaded\"}\n\n",
            "data: {\"text\":\"b\"}\n\n");
        assertThat(events).hasSize(3);
        assertThat(events.get(2)).isInstanceOfSatisfying(StreamEvent.Error.class,
            e -> assertThat(e.error().getMessage()).isEqualTo("overloaded"));
        assertThat(decoder.complete()).isFalse();
    }

    @Test
    void oversizedInvalidAndWronglyTypedEventsFailTheStreamForGood()
    {
        LinesDecoder small = new LinesDecoder(JsonStreamDecoder.Framing.SSE, 16);
        assertThatThrownBy(() -> decode(small, "data: {\"text\":\"" + "x".repeat(40)))
            .isInstanceOfSatisfying(GatewayException.class, e -> assertThat(e.kind()).isEqualTo(ErrorKind.UPSTREAM_UNAVAILABLE))
            .hasMessage("upstream sent a stream event over 16 bytes");
        assertThatThrownBy(() -> decode(new LinesDecoder(JsonStreamDecoder.Framing.NDJSON, 1024), "[1]\n"))
            .hasMessage("upstream sent an invalid stream line");
        LinesDecoder decoder = new LinesDecoder(JsonStreamDecoder.Framing.SSE, 1024);
        assertThatThrownBy(() -> decode(decoder, "data: {\"text\":7}\n\n")).isInstanceOf(GatewayException.class)
            .hasMessageContaining("text");
        assertThat(decode(decoder, "data: {\"text\":\"a\"}\n\n")).as("a failed stream decodes nothing more").isEmpty();
    }

    @Test
    void upstreamStatusesMapToKindsAndCredentialsAreNeverRelayed()
    {
        assertThat(UpstreamErrors.kind(429)).isEqualTo(ErrorKind.RATE_LIMITED);
        assertThat(UpstreamErrors.kind(404)).isEqualTo(ErrorKind.NOT_FOUND);
        assertThat(UpstreamErrors.kind(413)).isEqualTo(ErrorKind.REQUEST_TOO_LARGE);
        assertThat(UpstreamErrors.kind(422)).isEqualTo(ErrorKind.INVALID_REQUEST);
        assertThat(UpstreamErrors.kind(503)).isEqualTo(ErrorKind.UPSTREAM_ERROR);
        assertThat(UpstreamErrors.answerStatus(503)).isEqualTo(503);
        assertThat(UpstreamErrors.answerStatus(302)).as("a redirect is a misbehaving upstream").isEqualTo(502);
        GatewayException rejected = UpstreamErrors.credentialsRejected();
        assertThat(rejected.status()).isEqualTo(502);
        assertThat(rejected.getMessage()).isEqualTo(UpstreamErrors.CREDENTIALS_REJECTED);
    }

    @Test
    void upstreamMessagesAreCutAndOnlyJsonErrorObjectsAreRead()
    {
        String message = UpstreamErrors.message(Json.MAPPER.getNodeFactory().textNode("y".repeat(600)), "fallback");
        assertThat(message).hasSize("upstream: ".length() + UpstreamErrors.MAX_MESSAGE + 3).startsWith("upstream: yyy")
            .endsWith("...");
        assertThat(UpstreamErrors.message(null, "fallback")).isEqualTo("fallback");
        assertThat(UpstreamErrors.message(Json.MAPPER.getNodeFactory().textNode(" "), "fallback")).isEqualTo("fallback");
        assertThat(UpstreamErrors.errorObject("{\"error\":{\"message\":\"m\"}}".getBytes(StandardCharsets.UTF_8)).get("message")
            .textValue()).isEqualTo("m");
        assertThat(UpstreamErrors.errorObject("<html>bad gateway</html>".getBytes(StandardCharsets.UTF_8))).isNull();
        assertThat(UpstreamErrors.errorObject("{\"error\":\"text\"}".getBytes(StandardCharsets.UTF_8))).isNull();
        assertThat(UpstreamErrors.errorObject(new byte[0])).isNull();
    }

    @Test
    void aTopLevelFieldIsReadInPlaceAndNestedOnesAreSkipped()
    {
        byte[] json = "{\"a\":{\"type\":\"nested\"},\"type\":\"top\",\"n\":1}".getBytes(StandardCharsets.UTF_8);
        String type = JsonScan.field(json, 0, json.length, "type", JsonToken.VALUE_STRING, JsonParser::getText);
        assertThat(type).isEqualTo("top");
        String wrongType = JsonScan.field(json, 0, json.length, "n", JsonToken.VALUE_STRING, JsonParser::getText);
        assertThat(wrongType).as("a value of another type").isNull();
        byte[] broken = "{\"x\":".getBytes(StandardCharsets.UTF_8);
        String none = JsonScan.field(broken, 0, broken.length, "type", JsonToken.VALUE_STRING, JsonParser::getText);
        assertThat(none).isNull();
    }

    @Test
    void stringListsAndKnownKeysNameTheFieldAtFault() throws Exception
    {
        ObjectNode body = (ObjectNode)Json.MAPPER.readTree("{\"stop\":[\"a\",\"b\"],\"bad\":[\"a\",7],\"x\":null,\"y\":1}");
        assertThat(JsonInput.REQUEST.strings(JsonInput.REQUEST.optArray(body, "stop", "stop"), "stop")).containsExactly("a", "b");
        assertThat(JsonInput.REQUEST.strings(null, "stop")).isEmpty();
        assertThatThrownBy(() -> JsonInput.REQUEST.strings(JsonInput.REQUEST.optArray(body, "bad", "bad"), "bad"))
            .hasMessageStartingWith("bad[1]:");
        JsonInput.checkKnownKeys(body, "body", Set.of("stop", "bad", "y"));
        assertThatThrownBy(() -> JsonInput.checkKnownKeys(body, "body", Set.of("stop", "bad", "x")))
            .isInstanceOfSatisfying(GatewayException.class, e -> assertThat(e.kind()).isEqualTo(ErrorKind.UNSUPPORTED))
            .hasMessage("body.y: is not supported");
    }
}
