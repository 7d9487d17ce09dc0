package dev.sluice.support.sse;

import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

import static org.junit.jupiter.api.Assertions.assertEquals;

class EventFrameTest
{
    @Test
    void framesTheEventBetweenHeadAndEndInOneBufferOfExactlyTheirSize()
    {
        ByteBuffer frame = EventFrame.of(bytes("event: error\ndata: "), bytes("{\"type\":\"error\"}"), bytes("\n\n"));

        assertEquals(0, frame.position());
        assertEquals(frame.capacity(), frame.remaining());
        assertEquals("event: error\ndata: {\"type\":\"error\"}\n\n", StandardCharsets.UTF_8.decode(frame).toString());
    }

    @Test
    void framesALineWithoutAHead()
    {
        ByteBuffer frame = EventFrame.of(new byte[0], bytes("{\"error\":\"x\"}"), bytes("\n"));

        assertEquals("{\"error\":\"x\"}\n", StandardCharsets.UTF_8.decode(frame).toString());
    }

    @Test
    void framesWhatAGeneratorWritesBetweenHeadAndEnd()
    {
        ByteBuffer frame = EventFrame.of(bytes("data: "), g ->
        {
            g.writeStartObject();
            g.writeNumberField("n", 1);
            g.writeEndObject();
        }, bytes("\r\n\r\n"));

        assertEquals("data: {\"n\":1}\r\n\r\n", StandardCharsets.UTF_8.decode(frame).toString());
    }

    private static byte[] bytes(String s)
    {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
