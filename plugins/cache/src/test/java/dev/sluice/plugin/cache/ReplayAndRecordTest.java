package dev.sluice.plugin.cache;

import dev.sluice.support.codec.StreamRecorder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import dev.sluice.api.model.ChatResponse;
import dev.sluice.api.model.ContentPart;
import dev.sluice.api.model.ChatResponse.StopReason;
import dev.sluice.api.model.StreamEvent;
import dev.sluice.api.model.StreamItem;
import dev.sluice.api.model.Usage;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** A stored answer replayed as events and recorded again is the same answer: text, thinking, tool calls, usage. */
class ReplayAndRecordTest
{
    private static final ChatResponse ANSWER = new ChatResponse("id-1", "model-x", List.of(
        new ContentPart.Thinking("let me think", "sig=="),
        new ContentPart.Text("Hello, world! \uD83D\uDE00 and more text", null),
        new ContentPart.ToolCall("call_1", "get_weather", "{\"location\":\"Paris\"}", null),
        new ContentPart.ToolCall("call_2", "get_time", "{\"timezone\":\"CET\"}", null)),
        StopReason.TOOL_USE, "tool_calls", new Usage(120, 30, 20, 0, 5), 1700000000L, Map.of());

    @Test
    void aReplayRecordsBackToTheSameAnswerWhateverTheChunking()
    {
        for (int chunk : new int[] {0, 1, 3, 7, 1000})
        {
            StreamRecorder recorder = new StreamRecorder(1 << 20);
            ReplayStream replay = new ReplayStream(ANSWER, true, chunk, Duration.ZERO, null, Runnable::run);
            List<StreamItem> items = drain(replay);
            assertThat(items.get(items.size() - 1)).isSameAs(StreamItem.END);
            for (StreamItem item : items)
            {
                if (item instanceof StreamEvent e)
                    recorder.add(e);
            }
            assertThat(recorder.answer()).as("chunks of %d", chunk).isEqualTo(ANSWER);
        }
    }

    @Test
    void aReplayHasTheOrderOfAProviderStream()
    {
        List<StreamItem> items = drain(new ReplayStream(ANSWER, false, 0, Duration.ZERO, null, Runnable::run));
        assertThat(items.get(0)).isInstanceOf(StreamEvent.MessageStart.class);
        assertThat(items).filteredOn(i -> i instanceof StreamEvent.UsageReport).isEmpty();
        assertThat(items.get(items.size() - 2)).isInstanceOf(StreamEvent.Stop.class);
        assertThat(items).filteredOn(i -> i instanceof StreamEvent.BlockStop).hasSize(4);
        StreamEvent.ToolCallStart second = (StreamEvent.ToolCallStart)items.stream()
            .filter(i -> i instanceof StreamEvent.ToolCallStart).skip(1).findFirst().orElseThrow();
        assertThat(second.toolIndex()).isEqualTo(1);
        assertThat(second.index()).isEqualTo(3);
    }

    @Test
    void aStreamThatEndsWithAnErrorOrNoStopGivesNoAnswer()
    {
        StreamRecorder failed = new StreamRecorder(1 << 20);
        failed.add(new StreamEvent.MessageStart("i", "m", 0, Usage.ZERO));
        failed.add(new StreamEvent.TextStart(0));
        failed.add(new StreamEvent.TextDelta(0, "partial"));
        failed.add(new StreamEvent.Error(new dev.sluice.api.GatewayException(dev.sluice.api.ErrorKind.UPSTREAM_ERROR, "x")));
        assertThat(failed.answer()).isNull();

        StreamRecorder cut = new StreamRecorder(1 << 20);
        cut.add(new StreamEvent.MessageStart("i", "m", 0, Usage.ZERO));
        cut.add(new StreamEvent.TextStart(0));
        cut.add(new StreamEvent.TextDelta(0, "partial"));
        assertThat(cut.answer()).as("no Stop event: the stream did not end normally").isNull();
    }

    @Test
    void anAnswerOverTheRecordingBoundIsNotKept()
    {
        StreamRecorder recorder = new StreamRecorder(10);
        recorder.add(new StreamEvent.MessageStart("i", "m", 0, Usage.ZERO));
        recorder.add(new StreamEvent.TextStart(0));
        recorder.add(new StreamEvent.TextDelta(0, "more than ten characters"));
        recorder.add(new StreamEvent.BlockStop(0));
        recorder.add(new StreamEvent.Stop(StopReason.END_TURN, "stop", Usage.ZERO));
        assertThat(recorder.answer()).isNull();
    }

    private static List<StreamItem> drain(ReplayStream stream)
    {
        List<StreamItem> items = new ArrayList<>();
        while (true)
        {
            StreamItem item = stream.read();
            assertThat(item).as("an unpaced replay always has an item").isNotNull();
            items.add(item);
            if (item == StreamItem.END)
                return items;
        }
    }
}
