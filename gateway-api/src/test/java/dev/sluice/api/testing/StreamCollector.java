package dev.sluice.api.testing;

import dev.sluice.api.codec.StreamDecoder;
import dev.sluice.api.model.ChatResponse;
import dev.sluice.api.model.ContentPart;
import dev.sluice.api.model.StreamEvent;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

/** Decodes a whole streamed body as it would arrive, in small chunks, and reads the text out of what was decoded. */
public final class StreamCollector
{
    private StreamCollector()
    {
    }

    /**
     * @param chunk how many bytes each {@code decode} call gets: small, so that events split across chunks
     * @return the events, in order
     */
    public static List<StreamEvent> decode(StreamDecoder decoder, byte[] body, int chunk)
    {
        List<StreamEvent> events = new ArrayList<>();
        for (int at = 0; at < body.length; at += chunk)
            decoder.decode(ByteBuffer.wrap(body, at, Math.min(chunk, body.length - at)).slice(), events::add);
        return events;
    }

    /** @return the text of every text delta, concatenated */
    public static String text(List<StreamEvent> events)
    {
        StringBuilder text = new StringBuilder();
        for (StreamEvent e : events)
        {
            if (e instanceof StreamEvent.TextDelta delta)
                text.append(delta.text());
        }
        return text.toString();
    }

    /** @return the text of every text part, concatenated */
    public static String text(ChatResponse response)
    {
        StringBuilder text = new StringBuilder();
        for (ContentPart part : response.content())
        {
            if (part instanceof ContentPart.Text t)
                text.append(t.text());
        }
        return text.toString();
    }
}
