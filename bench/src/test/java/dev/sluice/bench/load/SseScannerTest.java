package dev.sluice.bench.load;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class SseScannerTest
{
    private static ByteBuffer ascii(String text)
    {
        return ByteBuffer.wrap(text.getBytes(StandardCharsets.US_ASCII));
    }

    @Test
    void findsEventsEndedByABlankLine()
    {
        SseScanner scanner = new SseScanner();

        assertThat(scanner.scan(ascii("data: {\"a\":1}\n\ndata: {\"b\":2}\n\ndata: [DONE]\n\n"))).isEqualTo(3);
        assertThat(scanner.lastEvent()).isEqualTo("data: [DONE]\n");
        assertThat(scanner.events()).isEqualTo(3);
    }

    @Test
    void findsEventsSplitAcrossChunksAtAnyByte()
    {
        String stream = "event: message_start\ndata: {}\n\nevent: message_stop\r\ndata: {\"type\":\"message_stop\"}\r\n\r\n";
        for (int split = 0; split <= stream.length(); split++)
        {
            SseScanner scanner = new SseScanner();
            int ended = scanner.scan(ascii(stream.substring(0, split))) + scanner.scan(ascii(stream.substring(split)));
            assertThat(ended).as("split at %d", split).isEqualTo(2);
            assertThat(scanner.lastEvent()).isEqualTo("event: message_stop\ndata: {\"type\":\"message_stop\"}\n");
        }
    }

    @Test
    void ignoresCommentsAndStrayBlankLines()
    {
        SseScanner scanner = new SseScanner();

        assertThat(scanner.scan(ascii("\n\n: keep-alive\n\n\ndata: x\n\n: ping\n\n"))).isEqualTo(1);
        assertThat(scanner.lastEvent()).isEqualTo("data: x\n");
    }

    @Test
    void leavesTheBufferPositionAlone()
    {
        ByteBuffer chunk = ascii("data: x\n\n");

        new SseScanner().scan(chunk);

        assertThat(chunk.position()).isZero();
    }

    @Test
    void keepsOnlyTheStartOfAHugeEvent()
    {
        byte[] data = new byte[10_000];
        Arrays.fill(data, (byte)'x');
        SseScanner scanner = new SseScanner();

        scanner.scan(ascii("data: " + new String(data, StandardCharsets.US_ASCII) + "\n\n"));

        assertThat(scanner.lastEvent()).hasSize(SseScanner.CAPTURE).startsWith("data: xxx");
    }

    @Test
    void seesTheFirstContentWhenTheEventCarryingItEnds()
    {
        String stream = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"content\":[]}}\n\n" +
            "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":" +
            "{\"type\":\"text\",\"text\":\"\"}}\n\n" +
            ": keep-alive\n\n" +
            "event: ping\ndata: {\"type\":\"ping\"}\n\n" +
            "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":" +
            "{\"type\":\"text_delta\",\"text\":\"Hi\"}}\n\n" +
            "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n";
        int deltaEnd = stream.indexOf("\n\nevent: message_stop") + 2;
        for (int split = 0; split <= stream.length(); split++)
        {
            SseScanner scanner = new SseScanner();
            scanner.scan(ascii(stream.substring(0, split)));
            assertThat(scanner.contentSeen()).as("split at %d", split).isEqualTo(split >= deltaEnd);
            scanner.scan(ascii(stream.substring(split)));
            assertThat(scanner.contentSeen()).as("split at %d", split).isTrue();
        }
    }

    @Test
    void aStreamOfLifecycleEventsOnlyHasNoContent()
    {
        SseScanner scanner = new SseScanner();

        scanner.scan(ascii("data: {\"choices\":[{\"delta\":{\"role\":\"assistant\",\"content\":\"\"}}]}\n\n" +
            "data: {\"choices\":[{\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n"));

        assertThat(scanner.events()).isEqualTo(3);
        assertThat(scanner.contentSeen()).isFalse();
    }
}
