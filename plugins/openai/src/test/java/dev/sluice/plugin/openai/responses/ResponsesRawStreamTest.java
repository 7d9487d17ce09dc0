package dev.sluice.plugin.openai.responses;

import com.fasterxml.jackson.databind.JsonNode;
import dev.sluice.api.GatewayException;
import dev.sluice.api.exchange.EventStream;
import dev.sluice.api.model.RawFrame;
import dev.sluice.api.model.RetainedFrame;
import dev.sluice.api.model.StreamEvent;
import dev.sluice.api.model.StreamItem;
import dev.sluice.api.testing.TestBody;
import dev.sluice.support.json.Json;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The same-dialect relay of a Responses stream that the provider ends with an error: the client's error event is
 * numbered after the events it already got.
 */
class ResponsesRawStreamTest
{
    private TestBody body;

    @AfterEach
    void everyChunkReleasedExactlyOnce()
    {
        if (body != null)
            body.assertAllReleasedOnce();
    }

    @Test
    void aProvidersErrorEventIsRenderedWithTheSequenceNumberAfterTheRelayedEvents() throws IOException
    {
        String relayed = event("response.created", 0) + event("response.in_progress", 1)
            + event("response.output_text.delta", 2);
        // Whatever number the provider gave its error, the client's is the next after what it read.
        String error = "event: error\ndata: {\"type\":\"error\",\"code\":\"server_error\",\"message\":\"Overloaded\","
            + "\"param\":null,\"sequence_number\":0}\n\n";
        body = TestBody.of(utf8(relayed), utf8(error));

        List<StreamItem> items = drain(new ResponsesRawStream(body, usage -> { }));

        assertThat(items.get(items.size() - 1)).isInstanceOf(StreamEvent.Error.class);
        GatewayException failure = ((StreamEvent.Error)items.get(items.size() - 1)).error();
        JsonNode rendered = data(ResponsesCodec.INSTANCE.newStreamEncoder(() -> null).error(failure));
        assertThat(rendered.path("type").asText()).isEqualTo("error");
        assertThat(rendered.path("code").asText()).isEqualTo("server_error");
        assertThat(rendered.path("message").asText()).contains("Overloaded");
        assertThat(rendered.path("sequence_number").asLong()).isEqualTo(3);
    }

    @Test
    void aProvidersResponseFailedIsRenderedWithTheSequenceNumberAfterTheRelayedEvents() throws IOException
    {
        String relayed = event("response.created", 0) + event("response.in_progress", 1);
        String failed = "event: response.failed\ndata: {\"type\":\"response.failed\",\"response\":{\"status\":"
            + "\"failed\",\"error\":{\"code\":\"server_error\",\"message\":\"Overloaded\"}},\"sequence_number\":2}\n\n";
        body = TestBody.of(utf8(relayed + failed));

        List<StreamItem> items = drain(new ResponsesRawStream(body, usage -> { }));

        GatewayException failure = ((StreamEvent.Error)items.get(items.size() - 1)).error();
        JsonNode rendered = data(ResponsesCodec.INSTANCE.newStreamEncoder(() -> null).error(failure));
        assertThat(rendered.path("sequence_number").asLong()).isEqualTo(2);
    }

    @Test
    void aTranslatedStreamsErrorKeepsItsOwnNumbering() throws IOException
    {
        var encoder = ResponsesCodec.INSTANCE.newStreamEncoder(() -> null);
        encoder.encode(new StreamEvent.TextDelta(0, "Hi"));

        JsonNode rendered = data(encoder.error(new GatewayException(dev.sluice.api.ErrorKind.UPSTREAM_ERROR, "boom")));

        assertThat(rendered.path("type").asText()).isEqualTo("response.failed");
        // created, in_progress, output_item.added, content_part.added, the delta, then the message closed
        // (output_text.done, content_part.done, output_item.done) before this one.
        assertThat(rendered.path("sequence_number").asLong()).isEqualTo(8);
    }

    private static String event(String type, int sequence)
    {
        return "event: " + type + "\ndata: {\"type\":\"" + type + "\",\"sequence_number\":" + sequence + "}\n\n";
    }

    private static byte[] utf8(String s)
    {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    /** @return the data of the last SSE event in {@code bytes} */
    private static JsonNode data(ByteBuffer bytes) throws IOException
    {
        String text = StandardCharsets.UTF_8.decode(bytes).toString();
        int data = text.lastIndexOf("data: ");
        assertThat(data).as(text).isPositive();
        return Json.MAPPER.readTree(text.substring(data + "data: ".length()).trim());
    }

    /** Reads until a terminal item, releasing the frames it lends. */
    private static List<StreamItem> drain(EventStream stream)
    {
        List<StreamItem> items = new ArrayList<>();
        for (int guard = 0; guard < 10_000; guard++)
        {
            StreamItem item = stream.read();
            if (item == null)
                throw new AssertionError("stream stalled");
            if (item instanceof RetainedFrame frame)
                frame.release();
            else if (!(item instanceof RawFrame))
                items.add(item);
            if (item == StreamItem.END || item instanceof StreamEvent.Error)
                return items;
        }
        throw new AssertionError("stream did not end");
    }
}
