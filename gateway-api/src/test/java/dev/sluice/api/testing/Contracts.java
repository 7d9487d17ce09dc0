package dev.sluice.api.testing;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.sluice.api.model.StreamEvent;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.math.BigDecimal;
import java.util.Comparator;
import java.util.List;

/**
 * Checks every dialect plugin's tests need: the canonical stream contract a {@link dev.sluice.api.codec.StreamDecoder}
 * must keep, and JSON equality as trees (for golden files). Failures are {@link AssertionError}s.
 */
public final class Contracts
{
    private static final ObjectMapper MAPPER = new ObjectMapper();

    private static final Comparator<JsonNode> SAME_VALUE = (a, b) ->
    {
        if (a.equals(b))
            return 0;
        if (a.isNumber() && b.isNumber())
            return new BigDecimal(a.asText()).compareTo(new BigDecimal(b.asText()));
        return 1;
    };

    private Contracts()
    {
    }

    /** Asserts two JSON documents are equal as trees (key order free, numbers by value), showing both if not. */
    public static void assertSameJson(byte[] actual, byte[] expected)
    {
        JsonNode a = tree(actual);
        JsonNode e = tree(expected);
        if (!a.equals(SAME_VALUE, e))
            throw new AssertionError("JSON differs.\nexpected:\n" + e.toPrettyString() + "\nactual:\n" + a.toPrettyString());
    }

    private static JsonNode tree(byte[] json)
    {
        try
        {
            return MAPPER.readTree(json);
        }
        catch (IOException e)
        {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * Asserts the order documented on {@link StreamEvent}: MessageStart, then each block (numbered from 0 in order)
     * as start, deltas of that block, BlockStop, then Stop, then at most one UsageReport.
     */
    public static void assertWellFormed(List<StreamEvent> events)
    {
        check(!events.isEmpty(), "the stream has no events");
        check(events.get(0) instanceof StreamEvent.MessageStart, "the stream starts with " + events.get(0));
        int open = -1;
        int next = 0;
        boolean stopped = false;
        boolean usage = false;
        for (int i = 1; i < events.size(); i++)
        {
            StreamEvent e = events.get(i);
            String where = "event " + i + " " + e;
            int start = e instanceof StreamEvent.TextStart t ? t.index()
                : e instanceof StreamEvent.ThinkingStart t ? t.index()
                : e instanceof StreamEvent.ToolCallStart t ? t.index() : -1;
            if (start >= 0)
            {
                check(!stopped, where + ": after the Stop");
                check(open == -1, where + ": block " + open + " is still open");
                check(start == next, where + ": expected block " + next);
                open = start;
                next++;
            }
            else if (e instanceof StreamEvent.TextDelta d)
                check(d.index() == open, where + ": not the open block " + open);
            else if (e instanceof StreamEvent.ThinkingDelta d)
                check(d.index() == open, where + ": not the open block " + open);
            else if (e instanceof StreamEvent.ToolCallDelta d)
                check(d.index() == open, where + ": not the open block " + open);
            else if (e instanceof StreamEvent.BlockStop s)
            {
                check(s.index() == open, where + ": not the open block " + open);
                open = -1;
            }
            else if (e instanceof StreamEvent.Stop)
            {
                check(open == -1, where + ": block " + open + " is still open");
                check(!stopped, where + ": a second Stop");
                stopped = true;
            }
            else if (e instanceof StreamEvent.UsageReport)
            {
                check(stopped, where + ": usage before the Stop");
                check(!usage, where + ": a second UsageReport");
                usage = true;
            }
            else
            {
                throw new AssertionError(where + ": unexpected");
            }
        }
        check(stopped, "the stream has no Stop");
    }

    private static void check(boolean condition, String message)
    {
        if (!condition)
            throw new AssertionError(message);
    }
}
