package dev.sluice.bench.mock;

import java.nio.ByteBuffer;
import java.util.concurrent.TimeUnit;

import dev.sluice.bench.mock.OpenAiTemplates.StreamTemplate;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.IteratingCallback;
import org.eclipse.jetty.util.thread.Scheduler;

/**
 * Writes the SSE events of one streamed answer, one at a time.
 *
 * <p>Each step is either a wait (a scheduler task that completes this callback) or a write (whose callback is this
 * one), so the next event is produced only after the previous write succeeded: a client that reads slowly slows
 * the stream down instead of filling memory. {@link IteratingCallback} keeps writes that complete synchronously
 * from recursing. The last event is written with the exchange's guarded handler callback; a cut fails it
 * instead.</p>
 */
final class SseStream extends IteratingCallback
{
    private static final long CUT_GRACE_MILLIS = 50;

    private final MockExchange exchange;
    private final Response response;
    private final Scheduler scheduler;
    private final StreamTemplate template;
    private final boolean includeUsage;
    private final byte[] prefix;
    private final int promptTokens;
    private final int completionTokens;
    private final long firstDelayMillis;
    private final long intervalMillis;
    private final int cutIndex;
    private final int size;
    private int next;
    private boolean waited;
    private volatile Scheduler.Task timer;

    SseStream(MockExchange exchange, Response response, Scheduler scheduler, StreamTemplate template, boolean includeUsage,
              byte[] prefix, int promptTokens, int completionTokens, long firstDelayMillis, long intervalMillis, int cutIndex)
    {
        this.exchange = exchange;
        this.response = response;
        this.scheduler = scheduler;
        this.template = template;
        this.includeUsage = includeUsage;
        this.prefix = prefix;
        this.promptTokens = promptTokens;
        this.completionTokens = completionTokens;
        this.firstDelayMillis = firstDelayMillis;
        this.intervalMillis = intervalMillis;
        this.cutIndex = cutIndex;
        this.size = template.size(includeUsage);
    }

    @Override
    protected Action process()
    {
        if (!exchange.isResponding())
            return Action.SUCCEEDED;
        // Every event before `next` has been written: process() runs only after the previous step succeeded.
        exchange.wrote(next);
        if (next == cutIndex && waited)
        {
            exchange.cut();
            return Action.SUCCEEDED;
        }
        long delay = delayBefore(next);
        if (delay > 0 && !waited)
        {
            waited = true;
            timer = scheduler.schedule(this::succeeded, delay, TimeUnit.MILLISECONDS);
            return Action.SCHEDULED;
        }
        waited = false;
        ByteBuffer event = template.render(next, includeUsage, prefix, promptTokens, completionTokens);
        next++;
        if (next == size)
        {
            exchange.writeLastEvent(event);
            return Action.SUCCEEDED;
        }
        response.write(false, event, this);
        return Action.SCHEDULED;
    }

    private long delayBefore(int index)
    {
        if (index == cutIndex)
        {
            // Give the events before the cut time to reach the client: an HTTP/2 client that reads a reset in the
            // same packet as the last DATA frames may drop those frames, which would make a cut-after-n test flaky.
            return Math.max(intervalMillis, CUT_GRACE_MILLIS);
        }
        if (index == 0)
            return firstDelayMillis;
        return template.paced(index, includeUsage) ? intervalMillis : 0;
    }

    @Override
    protected void onFailure(Throwable cause)
    {
        Scheduler.Task task = timer;
        if (task != null)
            task.cancel();
    }

    @Override
    protected void onCompleteFailure(Throwable cause)
    {
        // A failed write: the client is gone. When the exchange aborted us, it is already done and ignores this.
        exchange.clientFailed(cause);
    }

    @Override
    public InvocationType getInvocationType()
    {
        // process() only schedules or starts a write; it never blocks, so Jetty may call it from any thread.
        return InvocationType.NON_BLOCKING;
    }

    @Override
    public String toString()
    {
        return "SseStream[" + next + "/" + size + ", " + exchange + "]";
    }
}
