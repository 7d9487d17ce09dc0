package dev.sluice.support.sse;

import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

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
}
