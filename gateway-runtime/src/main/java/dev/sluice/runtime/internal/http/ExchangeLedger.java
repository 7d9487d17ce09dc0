package dev.sluice.runtime.internal.http;

import dev.sluice.api.exchange.Completion;
import dev.sluice.api.exchange.Completion.CompletionListener;
import dev.sluice.runtime.internal.chain.ChainAssembler.Chain;
import dev.sluice.runtime.internal.chain.Completions;
import dev.sluice.runtime.internal.chain.DefaultExchange;

import java.time.Duration;
import java.util.concurrent.atomic.LongAdder;

/**
 * What the gateway keeps across requests about their ends: how many are in flight, who is told when one ends (the
 * completion listeners, the per-stage breakdown), and the admission limit whose permit an admitted request gives back.
 * One per gateway handler, shared by every {@link CompletionRecord}; nothing in it takes a lock.
 */
final class ExchangeLedger
{
    final Chain chain;
    final CompletionListener[] listeners;
    /** The per-stage breakdown, or {@code null} when it is off. */
    final StageStats stageStats;
    /** The limit on chat requests in flight, or {@code null} when admission is off. */
    final Admission admission;
    // Requests begun and not yet ended (their completion listeners run): at stop, the bindings are closed only after the
    // exchanges the server's stop cut have ended, which happens on other threads after the stop returned.
    private final LongAdder inFlight = new LongAdder();

    ExchangeLedger(Chain chain, StageStats stageStats, Admission admission)
    {
        this.chain = chain;
        this.listeners = chain.completionListeners();
        this.stageStats = stageStats;
        this.admission = admission;
    }

    /** @return whether a request answered without an exchange needs a record: only when someone listens */
    boolean recordsUnrouted()
    {
        return listeners.length > 0;
    }

    void begun()
    {
        inFlight.increment();
    }

    /**
     * A request ended: records its stages (a completed exchange, not a warm-up), tells the exchange's and the gateway's
     * completion listeners, gives back its admission permit. Runs before Jetty may recycle the response.
     *
     * @param exchange the request's exchange, or {@code null} when it had none
     * @param warmup   whether it is the gateway's own warm-up exchange: it leaves no trace (no log line, metric, span)
     * @param admitted whether it holds an admission permit
     */
    void ended(CompletionRecord record, DefaultExchange exchange, boolean warmup, boolean admitted)
    {
        if (exchange != null)
        {
            if (stageStats != null && record.outcome() == Completion.Outcome.COMPLETED && !warmup)
                stageStats.record(exchange);
            exchange.completed(record);
        }
        try
        {
            if (!warmup)
            {
                for (CompletionListener l : listeners)
                    Completions.call(l, record);
            }
        }
        finally
        {
            inFlight.decrement();
            if (admitted && admission != null)
                admission.release();
        }
    }

    /** @return requests begun and not yet ended */
    long inFlight()
    {
        return inFlight.sum();
    }

    /**
     * Waits until every request begun has ended (its completion listeners ran), or {@code timeout} passed. Called at
     * stop, after the server stopped: exchanges the end of the grace cut complete on other threads, after that.
     *
     * @return whether none is left
     */
    boolean awaitEnded(Duration timeout) throws InterruptedException
    {
        long deadline = System.nanoTime() + timeout.toNanos();
        // Polling, at shutdown only: a per-exchange notification would cost every request.
        while (inFlight.sum() > 0)
        {
            if (System.nanoTime() - deadline > 0)
                return false;
            Thread.sleep(5);
        }
        return true;
    }
}
