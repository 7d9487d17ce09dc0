package dev.sluice.runtime.internal.http;

import org.eclipse.jetty.io.ArrayByteBufferPool;
import org.eclipse.jetty.io.ByteBufferPool;
import org.eclipse.jetty.util.component.ContainerLifeCycle;
import org.eclipse.jetty.util.thread.QueuedThreadPool;
import org.eclipse.jetty.util.thread.ScheduledExecutorScheduler;

/**
 * The process's one execution model: one thread pool of fixed size, one scheduler thread and one capped buffer pool,
 * shared by the server connector and every upstream client (see docs/operations.md, "Execution model").
 *
 * <p>The pool is fixed (minimum = maximum) so that the thread count after any load equals the idle count: a growing
 * pool adds a thread whenever none is idle (a GC pause is enough) and sheds them one per idle period. Its size is
 * every thread the server and the upstream connectors hold for good (acceptor, selectors), plus the workers that run
 * what the selectors hand off. Nothing on a request's path blocks, so a few workers per core suffice. Sizes are
 * settled when the chain is assembled (each connector reports its threads with {@link #reserve}), then {@link #start()} starts
 * the threads before any connector: components that receive a started pool do not stop it, this container does.</p>
 */
public final class Execution extends ContainerLifeCycle
{
    /** The default buffer pool cap, heap and direct memory each. */
    public static final long DEFAULT_BUFFER_POOL_BYTES = 16L << 20;

    private final QueuedThreadPool threads;
    private final ScheduledExecutorScheduler scheduler;
    private final ByteBufferPool buffers;
    private final int workers;
    private int reserved;

    /**
     * @param workers        worker threads beyond the selectors, {@code <= 0} for {@link #defaultWorkers()}
     * @param bufferPoolBytes the buffer pool's cap on retained heap and on retained direct memory
     * @param buffers        a buffer pool to use instead (tests pass a tracking pool), or {@code null}
     */
    public Execution(int workers, long bufferPoolBytes, ByteBufferPool buffers)
    {
        this.workers = workers > 0 ? workers : defaultWorkers();
        threads = new QueuedThreadPool(this.workers, this.workers, 60_000);
        threads.setName("sluice");
        // No reserved threads: the handler never blocks, so handing production to a spare thread on every task only
        // costs futex wake-ups. Measured (open loop 1,500 req/s, warm): 554-601 -> 358-452 µs gateway CPU/request.
        threads.setReservedThreads(0);
        scheduler = new ScheduledExecutorScheduler("sluice-scheduler", false);
        // Jetty's buckets (4 KiB steps up to 64 KiB; larger buffers are not pooled) with a cap on what the pool
        // retains: the default retains up to an eighth of the heap, and as much direct memory, after a burst. Each
        // bucket is Jetty's compound pool: a scanned pool of 256 entries, then a queue. A bucket size of -1 would make
        // it one unbounded scanned pool, whose acquire walks every buffer in use: with thousands of requests in flight
        // (a backlog after a pause or a load step) that made each request dearer just when the backlog had to drain.
        // The HTTP/1.1 connections' request buffers, one held per request in flight, come from a stack of their own
        // (RequestBuffers): Jetty's pool would look past every one held to find a free one. A pool given instead (tests
        // give a tracking pool) serves them as it serves every other buffer.
        this.buffers = buffers != null ? buffers : new RequestBuffers(
            new ArrayByteBufferPool(0, 4096, 64 * 1024, Integer.MAX_VALUE, bufferPoolBytes, bufferPoolBytes),
            HttpGateway.INPUT_BUFFER_BYTES, bufferPoolBytes);
        addBean(threads);
        addBean(scheduler);
        addBean(this.buffers);
    }

    /** @return the default worker count: two per core, at least four */
    public static int defaultWorkers()
    {
        return Math.max(4, 2 * Runtime.getRuntime().availableProcessors());
    }

    /** Reserves {@code n} threads that a connector holds for good (acceptor, selectors); call before {@link #start()}. */
    public void reserve(int n)
    {
        if (isStarted())
            throw new IllegalStateException("the pool is sized before it starts");
        reserved += n;
    }

    @Override
    protected void doStart() throws Exception
    {
        int size = workers + reserved;
        threads.setMaxThreads(size);
        threads.setMinThreads(size);
        super.doStart();
        // The scheduler creates its thread on first use: create it now, so that load never adds a thread.
        scheduler.schedule(() -> { }, 0, java.util.concurrent.TimeUnit.MILLISECONDS);
    }

    /** @return the shared thread pool */
    public QueuedThreadPool threads()
    {
        return threads;
    }

    /** @return the shared scheduler */
    public ScheduledExecutorScheduler scheduler()
    {
        return scheduler;
    }

    /** @return the shared buffer pool */
    public ByteBufferPool buffers()
    {
        return buffers;
    }
}
