package dev.sluice.plugin.guard;

import dev.sluice.api.ErrorKind;
import dev.sluice.api.exchange.EventStream;
import dev.sluice.api.model.ChatResponse.StopReason;
import dev.sluice.api.model.StreamEvent;
import dev.sluice.api.model.StreamItem;
import org.junit.jupiter.api.Test;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The hold-back window on a canonical stream: a producer of events that hands them out one demand at a time, as an
 * upstream stream does, and a consumer that reads until {@code null} and demands, as the runtime's pump does.
 */
class GuardStreamTest
{
    private static final String CARD = "4111 1111 1111 1111";

    /** Hands out its events only after a demand, one batch per demand, and records a cancel. */
    private static final class Source implements EventStream
    {
        private final ArrayDeque<List<StreamItem>> batches = new ArrayDeque<>();
        private final ArrayDeque<StreamItem> ready = new ArrayDeque<>();
        private int reads;
        private Throwable cancelled;

        Source(List<List<StreamItem>> batches)
        {
            this.batches.addAll(batches);
        }

        @Override
        public StreamItem read()
        {
            reads++;
            return ready.poll();
        }

        @Override
        public void demand(Runnable onAvailable)
        {
            List<StreamItem> next = batches.poll();
            if (next != null)
            {
                ready.addAll(next);
                onAvailable.run();
            }
        }

        @Override
        public void cancel(Throwable cause)
        {
            cancelled = cause;
        }
    }

    private static List<StreamItem> drain(EventStream stream)
    {
        List<StreamItem> items = new ArrayList<>();
        boolean[] more = {true};
        while (more[0])
        {
            StreamItem item;
            while ((item = stream.read()) != null)
            {
                items.add(item);
                if (item == StreamItem.END || item instanceof StreamEvent.Error)
                    return items;
            }
            more[0] = false;
            stream.demand(() -> more[0] = true);
        }
        return items;
    }

    private static List<List<StreamItem>> textStream(List<String> deltas)
    {
        List<List<StreamItem>> batches = new ArrayList<>();
        batches.add(List.of(new StreamEvent.MessageStart("id", "m", 0, null), new StreamEvent.TextStart(0)));
        for (String delta : deltas)
            batches.add(List.of(new StreamEvent.TextDelta(0, delta)));
        batches.add(List.of(new StreamEvent.BlockStop(0), new StreamEvent.Stop(StopReason.END_TURN, null, null),
            StreamItem.END));
        return batches;
    }

    private static List<String> split(String text, int size)
    {
        List<String> parts = new ArrayList<>();
        for (int i = 0; i < text.length(); i += size)
            parts.add(text.substring(i, Math.min(text.length(), i + size)));
        return parts;
    }

    private static String text(List<StreamItem> items)
    {
        StringBuilder b = new StringBuilder();
        for (StreamItem item : items)
        {
            if (item instanceof StreamEvent.TextDelta d)
                b.append(d.text());
        }
        return b.toString();
    }

    private static RuleSet rules(String name, Rule.Action action, boolean report)
    {
        return new RuleSet(List.of(new Rule(name, Rule.Direction.RESPONSE, new Detector[] {Detector.BUILT_IN.get(name)},
            action)), report);
    }

    @Test
    void redactsAnEmailSplitOverManyEventsBeforeAnyOfItIsReleased()
    {
        String answer = "Write to john.doe@example.com and I will answer. " + "x".repeat(300) + " bye";
        for (int size = 1; size <= 7; size++)
        {
            for (int window : new int[] {32, 128})
            {
                GuardStream stream = new GuardStream(new Source(textStream(split(answer, size))),
                    rules("email", Rule.Action.REDACT, false), window);
                List<StreamItem> items = drain(stream);
                String seen = text(items);
                assertThat(seen).isEqualTo(answer.replace("john.doe@example.com", "[REDACTED:email]"));
                // No event ever carried any part of the address: each delta is checked on its own too.
                for (StreamItem item : items)
                {
                    if (item instanceof StreamEvent.TextDelta d)
                        assertThat(d.text()).doesNotContain("john").doesNotContain("example.com");
                }
                assertThat(items.get(items.size() - 1)).isEqualTo(StreamItem.END);
            }
        }
    }

    @Test
    void releasesTextBehindTheWindowBeforeTheBlockEnds()
    {
        String answer = "y".repeat(500);
        Source source = new Source(textStream(split(answer, 10)));
        GuardStream stream = new GuardStream(source, rules("email", Rule.Action.REDACT, false), 128);
        List<StreamItem> items = drain(stream);
        // Text flowed while the block was open: more than one delta, the last released at BlockStop.
        long deltas = items.stream().filter(i -> i instanceof StreamEvent.TextDelta).count();
        assertThat(deltas).isGreaterThan(30);
        assertThat(text(items)).isEqualTo(answer);
    }

    @Test
    void blocksACardSplitOverEventsAndCancelsTheUpstream()
    {
        String answer = "Your card is " + CARD + ", keep it safe.";
        Source source = new Source(textStream(split(answer, 3)));
        GuardStream stream = new GuardStream(source, rules("card", Rule.Action.BLOCK, false), 128);
        List<StreamItem> items = drain(stream);
        StreamItem last = items.get(items.size() - 1);
        assertThat(last).isInstanceOfSatisfying(StreamEvent.Error.class,
            e -> assertThat(e.error().kind()).isEqualTo(ErrorKind.GUARDRAIL_BLOCKED));
        assertThat(text(items)).doesNotContain("4111").doesNotContain("1111");
        assertThat(source.cancelled).isNotNull();
        // Terminal: it keeps returning the error.
        assertThat(stream.read()).isSameAs(last);
    }

    @Test
    void holdsToolArgumentsUntilTheCallIsCompleteThenRedactsThem()
    {
        String arguments = "{\"card\":\"" + CARD + "\",\"name\":\"Ann\"}";
        List<List<StreamItem>> batches = new ArrayList<>();
        batches.add(List.of(new StreamEvent.MessageStart("id", "m", 0, null),
            new StreamEvent.ToolCallStart(0, 0, "call_1", "pay")));
        for (String fragment : split(arguments, 4))
            batches.add(List.of(new StreamEvent.ToolCallDelta(0, 0, fragment)));
        batches.add(List.of(new StreamEvent.BlockStop(0), new StreamEvent.Stop(StopReason.TOOL_USE, null, null),
            StreamItem.END));
        List<StreamItem> items = drain(new GuardStream(new Source(batches), rules("card", Rule.Action.REDACT, false), 128));
        List<StreamEvent.ToolCallDelta> deltas = items.stream().filter(i -> i instanceof StreamEvent.ToolCallDelta)
            .map(i -> (StreamEvent.ToolCallDelta) i).toList();
        assertThat(deltas).singleElement().satisfies(d ->
        {
            assertThat(d.argumentsDelta()).isEqualTo("{\"card\":\"[REDACTED:card]\",\"name\":\"Ann\"}");
            assertThat(d.toolIndex()).isZero();
        });
        // The delta comes right before its block's stop.
        int at = items.indexOf(deltas.get(0));
        assertThat(items.get(at + 1)).isEqualTo(new StreamEvent.BlockStop(0));
    }

    @Test
    void endsTheStreamRatherThanHoldToolArgumentsWithoutBound()
    {
        List<List<StreamItem>> batches = new ArrayList<>();
        batches.add(List.of(new StreamEvent.MessageStart("id", "m", 0, null),
            new StreamEvent.ToolCallStart(0, 0, "call_1", "pay")));
        String fragment = "x".repeat(64 * 1024);
        for (int i = 0; i <= GuardStream.MAX_HELD_ARGUMENTS / fragment.length(); i++)
            batches.add(List.of(new StreamEvent.ToolCallDelta(0, 0, fragment)));
        batches.add(List.of(new StreamEvent.BlockStop(0), StreamItem.END));
        Source source = new Source(batches);
        List<StreamItem> items = drain(new GuardStream(source, rules("card", Rule.Action.REDACT, false), 128));
        assertThat(items.get(items.size() - 1)).isInstanceOfSatisfying(StreamEvent.Error.class,
            e -> assertThat(e.error().getMessage()).contains("tool call arguments over"));
        assertThat(items).noneMatch(i -> i instanceof StreamEvent.ToolCallDelta);
        assertThat(source.cancelled).isNotNull();
    }

    @Test
    void endsTheStreamRatherThanHoldAMatchThatKeepsGrowing()
    {
        String answer = "the secret is " + "z".repeat(100_000);
        Rule rule = new Rule("greedy", Rule.Direction.RESPONSE, new Detector[] {Detector.deny("greedy", "secret.*")},
            Rule.Action.REDACT);
        Source source = new Source(textStream(split(answer, 1000)));
        List<StreamItem> items = drain(new GuardStream(source, new RuleSet(List.of(rule), false), 128));
        assertThat(text(items)).isEqualTo("the ");
        assertThat(items.get(items.size() - 1)).isInstanceOfSatisfying(StreamEvent.Error.class,
            e -> assertThat(e.error().getMessage()).contains("longer than the guard can hold back"));
        assertThat(source.cancelled).isNotNull();
        // It gave up after holding window + MAX_HELD_MATCH characters, not after reading the whole answer.
        assertThat(source.reads).isLessThan(answer.length() / 1000);
    }

    @Test
    void reportModePassesTheTextAndCountsEachHitOnce()
    {
        String answer = "a@b.io " + "z".repeat(200) + " c@d.io";
        Rule email = new Rule("email", Rule.Direction.RESPONSE, new Detector[] {Detector.BUILT_IN.get("email")},
            Rule.Action.REDACT);
        List<StreamItem> items = drain(new GuardStream(new Source(textStream(split(answer, 5))),
            new RuleSet(List.of(email), true), 16));
        assertThat(text(items)).isEqualTo(answer);
        // Held text is scanned after every delta; a hit is counted once, when it is released.
        assertThat(email.hits()).isEqualTo(2);
    }

    @Test
    void passesAnUpstreamErrorAndDropsWhatIsHeld()
    {
        List<List<StreamItem>> batches = new ArrayList<>();
        batches.add(List.of(new StreamEvent.MessageStart("id", "m", 0, null), new StreamEvent.TextStart(0)));
        batches.add(List.of(new StreamEvent.TextDelta(0, "mail me at jo")));
        batches.add(List.of(new StreamEvent.Error(new dev.sluice.api.GatewayException(ErrorKind.UPSTREAM_UNAVAILABLE,
            "cut"))));
        List<StreamItem> items = drain(new GuardStream(new Source(batches), rules("email", Rule.Action.REDACT, false), 128));
        assertThat(text(items)).isEmpty();
        assertThat(items.get(items.size() - 1)).isInstanceOf(StreamEvent.Error.class);
    }
}
