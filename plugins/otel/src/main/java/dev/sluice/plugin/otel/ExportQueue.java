package dev.sluice.plugin.otel;

import dev.sluice.api.binding.BindingContext.Scheduler;
import io.opentelemetry.context.Context;
import io.opentelemetry.sdk.common.CompletableResultCode;
import io.opentelemetry.sdk.trace.ReadWriteSpan;
import io.opentelemetry.sdk.trace.ReadableSpan;
import io.opentelemetry.sdk.trace.SpanProcessor;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SpanExporter;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;

/**
 * The span processor of the {@code tracing} binding, in place of the SDK's {@code BatchSpanProcessor}, which starts a
 * worker thread of its own: a finished, sampled span is offered to a bounded queue (a span that finds it full is
 * dropped and counted), and a periodic task on the runtime's scheduler, when the queue is not empty, hands one drain
 * to the runtime's executor. The drain turns up to {@code maxBatch} spans into {@link SpanData} and calls
 * {@link SpanExporter#export}; at most one export is in flight, and one that leaves a full batch behind starts the
 * next drain as it completes.
 *
 * <p>On the request path ({@link #onEnd}) it costs a lock-free counter update and a queue insert: the conversion to
 * {@code SpanData} and the protobuf encoding happen in the drain. Thread-safe.
 */
final class ExportQueue implements SpanProcessor
{
    private static final Logger LOG = LoggerFactory.getLogger(ExportQueue.class);
    private static final long FAILURE_LOG_EVERY_NANOS = TimeUnit.MINUTES.toNanos(1);

    private final String name;
    private final SpanExporter exporter;
    private final Executor executor;
    private final int capacity;
    private final int maxBatch;
    // Lock-free and bounded by the size counter: an exchange's completion never waits for a lock here.
    private final ConcurrentLinkedQueue<ReadableSpan> queue = new ConcurrentLinkedQueue<>();
    private final AtomicInteger size = new AtomicInteger();
    private final AtomicBoolean exporting = new AtomicBoolean();
    private final LongAdder exported = new LongAdder();
    private final LongAdder dropped = new LongAdder();
    private final LongAdder failed = new LongAdder();
    private volatile CompletableResultCode inFlight = CompletableResultCode.ofSuccess();
    private volatile Scheduler.Task task;
    private volatile long lastFailureLog;
    private volatile boolean closed;

    /**
     * @param name     the binding's name, for logs
     * @param exporter where batches go
     * @param executor the runtime's executor, which runs each drain
     * @param capacity the most spans the queue holds
     * @param maxBatch the most spans one export carries
     */
    ExportQueue(String name, SpanExporter exporter, Executor executor, int capacity, int maxBatch)
    {
        this.name = name;
        this.exporter = exporter;
        this.executor = executor;
        this.capacity = capacity;
        this.maxBatch = maxBatch;
    }

    /** Starts the periodic look at the queue on the runtime's scheduler; {@link #close} cancels it. */
    void start(Scheduler scheduler, Duration interval)
    {
        task = scheduler.scheduleWithFixedDelay(this::tick, interval, interval);
    }

    @Override
    public void onStart(Context parentContext, ReadWriteSpan span)
    {
    }

    @Override
    public boolean isStartRequired()
    {
        return false;
    }

    @Override
    public void onEnd(ReadableSpan span)
    {
        if (!span.getSpanContext().isSampled() || closed)
            return;
        if (size.incrementAndGet() > capacity)
        {
            size.decrementAndGet();
            dropped.increment();
            return;
        }
        queue.offer(span);
    }

    @Override
    public boolean isEndRequired()
    {
        return true;
    }

    /** On the scheduler thread: microseconds, never blocks. */
    private void tick()
    {
        if (size.get() > 0)
            drainSoon();
    }

    /** Hands one drain to the executor unless an export is in flight. */
    private void drainSoon()
    {
        if (!exporting.compareAndSet(false, true))
            return;
        try
        {
            executor.execute(this::drain);
        }
        catch (RejectedExecutionException e)
        {
            // The gateway is stopping: close() flushes what is left.
            exporting.set(false);
        }
    }

    /** On the runtime's executor: one batch, one export. */
    private void drain()
    {
        List<SpanData> batch = poll();
        if (batch.isEmpty())
        {
            exporting.set(false);
            return;
        }
        CompletableResultCode result;
        try
        {
            result = exporter.export(batch);
        }
        catch (RuntimeException e)
        {
            result = CompletableResultCode.ofExceptionalFailure(e);
        }
        inFlight = result;
        CompletableResultCode done = result;
        result.whenComplete(() ->
        {
            settle(done, batch.size());
            exporting.set(false);
            // A full batch may have left more behind: go on now rather than at the next tick.
            if (size.get() >= maxBatch && !closed)
                drainSoon();
        });
    }

    private List<SpanData> poll()
    {
        List<SpanData> batch = new ArrayList<>(Math.min(maxBatch, Math.max(1, size.get())));
        ReadableSpan span;
        while (batch.size() < maxBatch && (span = queue.poll()) != null)
        {
            size.decrementAndGet();
            batch.add(span.toSpanData());
        }
        return batch;
    }

    private void settle(CompletableResultCode result, int spans)
    {
        if (result.isSuccess())
        {
            exported.add(spans);
            return;
        }
        failed.add(spans);
        long now = System.nanoTime();
        // An unreachable collector fails every export: one line a minute says so without flooding the log.
        if (now - lastFailureLog > FAILURE_LOG_EVERY_NANOS || lastFailureLog == 0)
        {
            lastFailureLog = now;
            Throwable cause = result.getFailureThrowable();
            LOG.warn("tracing {}: an export of {} spans failed ({}); {} spans failed so far, {} dropped on a full queue",
                name, spans, cause == null ? "the collector refused it" : cause.toString(), failed.sum(), dropped.sum());
        }
    }

    /**
     * Cancels the periodic task, waits for the export in flight, exports what is queued and shuts the exporter down,
     * all within {@code wait}: called once from the binding's {@code close()}, when the gateway stops (the runtime's
     * executor still runs then). Blocks the closing thread only.
     */
    void close(Duration wait)
    {
        closed = true;
        Scheduler.Task t = task;
        if (t != null)
            t.cancel();
        long deadline = System.nanoTime() + wait.toNanos();
        inFlight.join(remainingMillis(deadline), TimeUnit.MILLISECONDS);
        while (size.get() > 0 && remainingMillis(deadline) > 0)
        {
            List<SpanData> batch = poll();
            if (batch.isEmpty())
                break;
            CompletableResultCode result = exporter.export(batch);
            result.join(remainingMillis(deadline), TimeUnit.MILLISECONDS);
            if (!result.isDone())
            {
                failed.add(batch.size());
                break;
            }
            settle(result, batch.size());
        }
        int left = size.getAndSet(0);
        queue.clear();
        dropped.add(left);
        exporter.shutdown().join(Math.max(1, remainingMillis(deadline)), TimeUnit.MILLISECONDS);
        LOG.info("tracing {}: closed; {} spans exported, {} failed to export, {} dropped", name, exported.sum(),
            failed.sum(), dropped.sum());
    }

    private static long remainingMillis(long deadline)
    {
        return Math.max(0, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime()));
    }

    /** @return spans the collector accepted */
    long exported()
    {
        return exported.sum();
    }

    /** @return spans dropped because the queue was full (or left when the gateway stopped) */
    long dropped()
    {
        return dropped.sum();
    }

    /** @return spans whose export failed */
    long failed()
    {
        return failed.sum();
    }
}
