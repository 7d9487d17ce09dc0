package dev.sluice.mock;

import java.nio.ByteBuffer;
import java.util.concurrent.TimeUnit;

import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.BufferUtil;
import org.eclipse.jetty.util.IteratingCallback;
import org.eclipse.jetty.util.thread.Scheduler;

/**
 * Writes the events of one streamed answer, one at a time.
 *
 * <p>Each step is either a wait (a scheduler task that completes this callback) or a write (whose callback is this
 * one), so the next event is produced only after the previous write succeeded: a client that reads slowly slows
 * the stream down instead of filling memory. {@link IteratingCallback} keeps writes that complete synchronously
 * from recursing. The last event is written with the exchange's guarded handler callback; a cut fails it
 * instead.</p>
 *
 * <p>Pacing: the first event waits the first-event delay, every content event (see {@link StreamScript}) waits the
 * event interval, the others follow at once; so a stream of {@code n} content events lasts the first-event delay
 * plus {@code n} intervals in every dialect. At the stop index a {@code mock-cut-} stream is cut and a
 * {@code mock-stream-error-} stream writes its error event as its last.</p>
 */
final class SseStream extends IteratingCallback
{
    private static final long CUT_GRACE_MILLIS = 50;

    private final MockExchange exchange;
    private final Response response;
    private final Scheduler scheduler;
    private final StreamScript script;
    private final Template.Values values;
    private final long firstDelayMillis;
    private final long intervalMillis;
    private final int stopIndex;
    private final byte[] error;
    private final int size;
    private int next;
    private boolean waited;
    private boolean committed;
    private volatile Scheduler.Task timer;

    /**
     * @param stopIndex the index of the event a cut or the error replaces, -1 for none
     * @param error the in-stream error event written at {@code stopIndex}, or {@code null} to cut there
     */
    SseStream(MockExchange exchange, Response response, Scheduler scheduler, StreamScript script,
              Template.Values values, long firstDelayMillis, long intervalMillis, int stopIndex, byte[] error)
    {
        this.exchange = exchange;
        this.response = response;
        this.scheduler = scheduler;
        this.script = script;
        this.values = values;
        this.firstDelayMillis = firstDelayMillis;
        this.intervalMillis = intervalMillis;
        this.stopIndex = stopIndex;
        this.error = error;
        this.size = script.size();
    }

    @Override
    protected Action process()
    {
        if (!exchange.isResponding())
            return Action.SUCCEEDED;
        // Every event before `next` has been written: process() runs only after the previous step succeeded.
        exchange.wrote(next);
        long delay = delayBefore(next);
        if (delay > 0 && !waited)
        {
            waited = true;
            timer = scheduler.schedule(this::succeeded, delay, TimeUnit.MILLISECONDS);
            return Action.SCHEDULED;
        }
        if (next == stopIndex)
            return stop();
        waited = false;
        committed = true;
        ByteBuffer event = script.event(next).buffer(values);
        next++;
        if (next == size)
        {
            exchange.writeLastEvent(event);
            return Action.SUCCEEDED;
        }
        response.write(false, event, this);
        return Action.SCHEDULED;
    }

    private Action stop()
    {
        if (error != null)
        {
            exchange.writeLastEvent(ByteBuffer.wrap(error));
            return Action.SUCCEEDED;
        }
        if (!committed)
        {
            // Nothing written yet (a Gemini stream cut before its first chunk): send the 200 and its headers first,
            // so the client sees a broken stream rather than no answer at all.
            committed = true;
            waited = true;
            response.write(false, BufferUtil.EMPTY_BUFFER, this);
            return Action.SCHEDULED;
        }
        exchange.cut();
        return Action.SUCCEEDED;
    }

    private long delayBefore(int index)
    {
        long delay = index == 0 ? firstDelayMillis : 0;
        if (index == stopIndex)
        {
            // The cut or the error takes the place of a content event. Give the events before a cut time to reach the
            // client: an HTTP/2 client that reads a reset in the same packet as the last DATA frames may drop those
            // frames, which would make a cut-after-n test flaky.
            delay += intervalMillis;
            return error == null ? Math.max(delay, CUT_GRACE_MILLIS) : delay;
        }
        return script.paced(index) ? delay + intervalMillis : delay;
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
