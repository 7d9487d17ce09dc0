package dev.sluice.plugin.log;

import com.fasterxml.jackson.core.JsonGenerator;
import dev.sluice.api.admin.AdminRoutes.AdminRequest;
import dev.sluice.api.admin.AdminRoutes.AdminResponse;
import dev.sluice.api.binding.ProxyBinding;
import dev.sluice.api.exchange.Completion;
import dev.sluice.api.exchange.Completion.CompletionListener;
import dev.sluice.api.exchange.Exchange;
import dev.sluice.api.exchange.Next;
import dev.sluice.api.exchange.Reply;
import dev.sluice.support.json.Json;
import dev.sluice.api.binding.BindingContext.Scheduler;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The request log: a gateway-wide {@link CompletionListener} that turns every completion into one JSON line, written
 * off the request path.
 *
 * <h2>The request path</h2>
 * {@link #completed} runs on the thread that finished the exchange. It copies the completion into a {@link LogRecord}
 * (references to the completion's strings, a few numbers, and bodies only for the routes that log them) and offers it
 * to a bounded lock-free {@link RecordQueue}. When the queue is full the record is dropped and counted — the listener
 * never waits. When {@code drain_at} records wait and no drain is pending, it submits one drain task to the runtime's
 * executor (one task per batch, not per request). {@link #handle} passes every exchange on untouched; only with
 * {@code bodies} does it look at the reply, to keep a reference to a body answer for the listener.
 *
 * <h2>The writer</h2>
 * The drain task runs on {@link dev.sluice.api.binding.BindingContext#executor()}: it takes the lock, writes what waits
 * (at most one queue's worth per task, then it resubmits itself, so a busy log does not hold a pool thread),
 * flushes, and releases the lock. A periodic tick on the runtime's scheduler ({@code flush_interval}) submits a drain
 * when records wait, when time rotation is due, or when a failed file must be opened again. {@link #close()}, called at
 * shutdown after the gateway's drain, cancels the tick and writes everything still queued before closing the file.
 *
 * <p>Counters: {@code written} lines handed to the file, {@code dropped} records refused by a full queue (or completed
 * after close), {@code failed} records lost to an I/O error or that could not be written as JSON. Every completion is
 * counted exactly once in one of them, or is still {@code queued}.
 */
final class LogBinding implements ProxyBinding, CompletionListener
{
    private static final Logger LOG = LoggerFactory.getLogger(LogBinding.class);

    private final String name;
    private final RecordQueue<LogRecord> queue;
    private final int drainAt;
    private final LogWriter writer;
    private final Executor executor;
    private final Set<String> bodyRoutes;
    private final boolean allRoutes;
    private final int maxBody;
    private final String answerAttribute;
    private final ReentrantLock lock = new ReentrantLock();
    private final AtomicBoolean drainPending = new AtomicBoolean();
    private final LongAdder written = new LongAdder();
    private final LongAdder dropped = new LongAdder();
    private final LongAdder failed = new LongAdder();
    private final LongAdder drains = new LongAdder();
    private volatile boolean closed;
    private volatile Scheduler.Task tick;
    // What the stats endpoint reads without the lock; written under it.
    private volatile long fileBytes;
    private volatile long rotations;
    private volatile String lastError;

    /**
     * @param name     the binding's name
     * @param options  the validated options
     * @param writer   the opened writer, or {@code null} under {@code sluice check}
     * @param executor the runtime's executor
     */
    LogBinding(String name, LogOptions options, LogWriter writer, Executor executor)
    {
        this.name = name;
        this.queue = new RecordQueue<>(options.queue());
        this.drainAt = options.drainAt();
        this.writer = writer;
        this.executor = executor;
        LogOptions.BodiesOptions bodies = options.bodies();
        this.bodyRoutes = bodies == null ? null : Set.copyOf(bodies.routes());
        this.allRoutes = bodies != null && bodies.allRoutes();
        this.maxBody = bodies == null ? 0 : bodies.bodyBytes();
        // Prefixed with the plugin id and the binding's name: two logs keep their own.
        this.answerAttribute = "log." + name + ".answer";
    }

    /** The writer was opened: its size is the file's. */
    void opened()
    {
        fileBytes = writer.size();
    }

    @Override
    public CompletionStage<Reply> handle(Exchange exchange, Next next)
    {
        if (bodyRoutes == null)
            return next.handle(exchange);
        // The route is learnt later: keep a reference to any body answer (no copy), the listener decides.
        return next.handle(exchange).thenApply(reply ->
        {
            if (reply instanceof Reply.Bytes bytes)
                exchange.attribute(answerAttribute, bytes.body());
            else if (reply instanceof Reply.Message message)
                exchange.attribute(answerAttribute, message.response());
            else if (reply instanceof Reply.Stream stream)
            {
                // Streams are relayed through a capture that keeps their first max_bytes as they pass.
                StreamCapture capture = new StreamCapture(stream.events(), maxBody);
                exchange.attribute(answerAttribute, capture);
                return new Reply.Stream(capture, stream.headers());
            }
            return reply;
        });
    }

    /** Copies the completion into the queue; never blocks. */
    @Override
    public void completed(Completion completion)
    {
        if (closed)
        {
            dropped.increment();
            return;
        }
        Exchange exchange = completion.exchange();
        boolean bodies = false;
        if (bodyRoutes != null && exchange != null)
        {
            // Set.copyOf's contains(null) throws: an exchange no route handled (a refusal by a binding) has none.
            String route = completion.route();
            bodies = allRoutes || (route != null && bodyRoutes.contains(route));
        }
        LogRecord record = LogRecord.of(completion, bodies, maxBody, bodies ? exchange.attribute(answerAttribute) : null);
        if (!queue.offer(record))
        {
            dropped.increment();
            return;
        }
        if (drainAt > 0 && queue.size() >= drainAt)
            requestDrain();
    }

    /** Starts the periodic tick on the runtime's scheduler. */
    void tickEvery(Scheduler scheduler, Duration every)
    {
        tick = scheduler.scheduleWithFixedDelay(this::tick, every, every);
    }

    /** On the scheduler thread: microseconds; the writing is the executor's. */
    private void tick()
    {
        if (queue.size() > 0 || (writer != null && (!writer.isOpen() || writer.rotationDue(System.currentTimeMillis()))))
            requestDrain();
    }

    private void requestDrain()
    {
        if (closed || !drainPending.compareAndSet(false, true))
            return;
        try
        {
            executor.execute(this::drain);
        }
        catch (RejectedExecutionException stopping)
        {
            // The gateway is stopping: close() writes what waits.
            drainPending.set(false);
        }
    }

    /** The drain task, on the runtime's executor. */
    void drain()
    {
        boolean more;
        lock.lock();
        try
        {
            more = !closed && drainLocked(queue.capacity());
        }
        finally
        {
            lock.unlock();
            drainPending.set(false);
        }
        // Records that came while this task ran, which saw it pending and did not ask for another.
        if (more || (drainAt > 0 && queue.size() >= drainAt))
            requestDrain();
    }

    /**
     * Writes up to {@code max} records and flushes. Holds the lock.
     *
     * @return whether records may remain
     */
    private boolean drainLocked(int max)
    {
        drains.increment();
        long now = System.currentTimeMillis();
        try
        {
            if (!writer.isOpen())
                writer.open(now);
            writer.rotateIfDue(now);
        }
        catch (IOException e)
        {
            failing("could not open or rotate " + writer.file(), e);
            // Nothing can be written now: what waits is lost rather than kept to fill the queue; counted.
            for (LogRecord r; (r = queue.poll()) != null; )
                failed.increment();
            return false;
        }
        int n = 0;
        LogRecord record;
        while (n < max && (record = queue.poll()) != null)
        {
            n++;
            try
            {
                writer.write(record, now);
                written.increment();
            }
            catch (IllegalArgumentException e)
            {
                failed.increment();
                LOG.warn("log {}: {}", name, e.getMessage());
            }
            catch (IOException e)
            {
                failed.increment();
                failing("could not write to " + writer.file(), e);
                return queue.size() > 0;
            }
        }
        try
        {
            writer.flush();
            lastError = null;
        }
        catch (IOException e)
        {
            failing("could not flush " + writer.file(), e);
        }
        fileBytes = writer.size();
        rotations = writer.rotations();
        return n == max;
    }

    /** An I/O failure: logged once per failure streak; the file is closed and opened again at the next drain. */
    private void failing(String what, IOException e)
    {
        String message = what + ": " + e;
        if (lastError == null)
            LOG.warn("log {}: {}; records are counted as failed until it works again", name, message);
        lastError = message;
        try
        {
            writer.close();
        }
        catch (IOException ignored)
        {
            // Already failing; the next drain opens the file again.
        }
    }

    /**
     * Cancels the tick, writes every record still queued, flushes and closes the file. Called once at shutdown, after
     * the gateway's drain (and after {@code sluice check}, when there is no file).
     */
    @Override
    public void close()
    {
        Scheduler.Task t = tick;
        if (t != null)
            t.cancel();
        if (writer == null)
            return;
        lock.lock();
        try
        {
            // Everything that waits, whatever the batch size; then nothing more is accepted.
            while (drainLocked(queue.capacity()))
            {
                // Another batch.
            }
            closed = true;
            // A completion that raced with closed: counted, never silently lost.
            for (LogRecord r; (r = queue.poll()) != null; )
                dropped.increment();
            writer.close();
        }
        catch (IOException e)
        {
            LOG.warn("log {}: could not close {}: {}", name, writer.file(), e.toString());
        }
        finally
        {
            lock.unlock();
        }
        LOG.info("log {}: closed {}; {} lines written, {} dropped, {} failed", name, writer.file(), written.sum(),
            dropped.sum(), failed.sum());
    }

    /** Serves {@code GET admin_path}: the writer's figures. */
    CompletionStage<AdminResponse> stats(AdminRequest request)
    {
        ByteArrayOutputStream out = new ByteArrayOutputStream(512);
        try (JsonGenerator json = Json.FACTORY.createGenerator(out))
        {
            json.writeStartObject();
            json.writeStringField("binding", name);
            json.writeStringField("file", writer == null ? null : writer.file());
            json.writeNumberField("file_bytes", fileBytes);
            json.writeNumberField("written", written.sum());
            json.writeNumberField("dropped", dropped.sum());
            json.writeNumberField("failed", failed.sum());
            json.writeNumberField("queued", queue.size());
            json.writeNumberField("queue_capacity", queue.capacity());
            json.writeNumberField("drains", drains.sum());
            json.writeNumberField("rotations", rotations);
            json.writeStringField("last_error", lastError);
            json.writeBooleanField("closed", closed);
            json.writeEndObject();
        }
        catch (IOException e)
        {
            return CompletableFuture.failedFuture(e);
        }
        return CompletableFuture.completedFuture(new AdminResponse(200, "application/json", out.toByteArray(), null));
    }
}
