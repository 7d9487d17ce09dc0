package dev.sluice.mock;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.IntSupplier;

/**
 * What the mock saw: counters, the newest requests, and the aborts.
 *
 * <p>The request path only touches lock-free structures; the lock is taken there only to wake a test that is
 * waiting in {@link #await(IntSupplier, int, Duration)}, which keeps recording off the hot path of a bench.</p>
 */
final class Recorder
{
    private final int limit;
    private final AtomicInteger requestCount = new AtomicInteger();
    private final AtomicInteger abortedCount = new AtomicInteger();
    private final AtomicInteger recordedCount = new AtomicInteger();
    private final ConcurrentLinkedDeque<RecordedRequest> requests = new ConcurrentLinkedDeque<>();
    private final ConcurrentLinkedDeque<AbortedRequest> aborts = new ConcurrentLinkedDeque<>();
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition changed = lock.newCondition();
    private volatile int waiters;

    /**
     * @param limit how many requests to keep (the newest); 0 disables recording but not counting
     */
    Recorder(int limit)
    {
        this.limit = limit;
    }

    boolean enabled()
    {
        return limit > 0;
    }

    void arrived()
    {
        requestCount.incrementAndGet();
        signal();
    }

    void record(RecordedRequest request)
    {
        requests.addLast(request);
        // Trim from the head: a bench run keeps the newest requests and bounded memory.
        if (recordedCount.incrementAndGet() > limit && requests.pollFirst() != null)
            recordedCount.decrementAndGet();
        signal();
    }

    void aborted(AbortedRequest abort)
    {
        aborts.addLast(abort);
        abortedCount.incrementAndGet();
        signal();
    }

    int requestCount()
    {
        return requestCount.get();
    }

    int abortedCount()
    {
        return abortedCount.get();
    }

    List<RecordedRequest> requests()
    {
        return List.copyOf(requests);
    }

    List<AbortedRequest> aborts()
    {
        return List.copyOf(aborts);
    }

    void clear()
    {
        requests.clear();
        recordedCount.set(0);
        aborts.clear();
        requestCount.set(0);
        abortedCount.set(0);
    }

    /**
     * Blocks the calling (test) thread until {@code counter} reaches {@code n} or the timeout passes.
     *
     * @return whether the counter reached {@code n}
     */
    boolean await(IntSupplier counter, int n, Duration timeout)
    {
        long remaining = timeout.toNanos();
        lock.lock();
        try
        {
            // Count ourselves in before testing the condition, so a concurrent signal() cannot be missed.
            waiters++;
            while (counter.getAsInt() < n)
            {
                if (remaining <= 0)
                    return false;
                remaining = changed.awaitNanos(remaining);
            }
            return true;
        }
        catch (InterruptedException x)
        {
            Thread.currentThread().interrupt();
            return counter.getAsInt() >= n;
        }
        finally
        {
            waiters--;
            lock.unlock();
        }
    }

    private void signal()
    {
        if (waiters == 0)
            return;
        lock.lock();
        try
        {
            changed.signalAll();
        }
        finally
        {
            lock.unlock();
        }
    }
}
