package dev.sluice.support.sse;

import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class SseParserTest
{
    private final List<String> names = new ArrayList<>();
    private final List<String> data = new ArrayList<>();
    private final SseParser parser = new SseParser((event, d) ->
    {
        names.add(event);
        data.add(d);
    }, 1 << 16);

    private void feed(String s)
    {
        parser.feed(ByteBuffer.wrap(s.getBytes(StandardCharsets.UTF_8)));
    }

    @Test
    void countsLinesThatAreNoFieldNorCommentAndStillIgnoresThem()
    {
        feed(": keep-alive\nid: 1\nretry: 10\nevent: x\ndata\ndata: {}\n\n");
        assertThat(parser.strayLines()).isZero();
        feed("<html>\n\u00ff\u00fe binary\r\ndat: no\ndata: {}\n\n");
        assertThat(parser.strayLines()).isEqualTo(3);
        assertThat(data).containsExactly("\n{}", "{}");
    }

    @Test
    void aRepeatedEventNameBecomesAStringOnce()
    {
        feed("event: content_block_delta\ndata: {\"a\":1}\n\nevent: ping\ndata: {}\n\n");
        feed("event: content_block_delta\ndata: {\"a\":2}\n\n");

        assertThat(names).containsExactly("content_block_delta", "ping", "content_block_delta");
        assertThat(names.get(2)).isSameAs(names.get(0));
        assertThat(data).containsExactly("{\"a\":1}", "{}", "{\"a\":2}");
    }

    @Test
    void eventNamesThatDifferOnlyBeyondAsciiAreNeverConfused()
    {
        // "é" is 0xC3 0xA9 in UTF-8; a lone 0xE9 byte is not valid UTF-8 and must not come back as the cached "é".
        feed("event: \u00e9\ndata: x\n\n");
        byte[] lone = "event: ?\ndata: y\n\n".getBytes(StandardCharsets.US_ASCII);
        lone[7] = (byte)0xE9;
        parser.feed(ByteBuffer.wrap(lone));
        feed("event: \u00e9\ndata: z\n\n");

        assertThat(names).containsExactly("\u00e9", "\ufffd", "\u00e9");
        assertThat(data).containsExactly("x", "y", "z");
    }

    @Test
    void namesAndBoundariesSurviveAnyChunking()
    {
        String stream = "event: message_start\r\ndata: {\"t\":1}\r\n\r\n: keep-alive\n\nevent: message_stop\rdata: {}\r\r";
        byte[] bytes = stream.getBytes(StandardCharsets.UTF_8);
        for (byte b : bytes)
            parser.feed(ByteBuffer.wrap(new byte[]{b}));

        assertThat(names).containsExactly("message_start", "message_stop");
        assertThat(data).containsExactly("{\"t\":1}", "{}");
        assertThat(parser.atBoundary()).isTrue();
    }

    @Test
    void aDirectChunkLargerThanTheScanWindowParsesAsTheSameBytesOnTheHeap()
    {
        // The window is 1 KiB: shifting the same events by one byte at a time puts every kind of line end (LF, CR,
        // CRLF with the CR last in a window) and every line across a window's edge somewhere.
        StringBuilder events = new StringBuilder();
        for (int i = 0; i < 40; i++)
            events.append("event: e").append(i % 3).append("\r\ndata: {\"n\":").append(i).append("}\rdata: ")
                .append("x".repeat(i * 7)).append("\n\r\n");
        for (int shift = 0; shift < 64; shift++)
        {
            byte[] bytes = (": " + "p".repeat(shift) + "\n" + events).getBytes(StandardCharsets.UTF_8);
            List<String> heap = new ArrayList<>();
            List<String> direct = new ArrayList<>();
            new SseParser((event, d) -> heap.add(event + "|" + d), 1 << 16).feed(ByteBuffer.wrap(bytes));
            ByteBuffer chunk = ByteBuffer.allocateDirect(bytes.length + 7);
            chunk.position(3);
            chunk.put(bytes).flip().position(3);
            SseParser parser = new SseParser((event, d) -> direct.add(event + "|" + d), 1 << 16);
            parser.feed(chunk);

            assertThat(chunk.position()).isEqualTo(3);
            assertThat(heap).hasSize(40).startsWith("e0|{\"n\":0}\n").endsWith("e0|{\"n\":39}\n" + "x".repeat(273));
            assertThat(direct).isEqualTo(heap);
            assertThat(parser.atBoundary()).isTrue();
        }
    }

    @Test
    void anEventOfExactlyTheLimitPassesAndOneByteMoreFails()
    {
        SseParser small = new SseParser((event, d) -> data.add(d), 16);
        small.feed(ByteBuffer.wrap("data: 0123456789\n\n".getBytes(StandardCharsets.US_ASCII)));
        assertThat(data).containsExactly("0123456789");

        // The limit counts an event's line bytes, line ends excluded: "data: 0123456789" is 16.
        ByteBuffer tooLong = ByteBuffer.allocateDirect(64).put("data: 0123456789A\n\n".getBytes(StandardCharsets.US_ASCII))
            .flip();
        assertThatThrownBy(() -> small.feed(tooLong))
            .isInstanceOf(IllegalStateException.class).hasMessage("event over 16 bytes");
    }
}
