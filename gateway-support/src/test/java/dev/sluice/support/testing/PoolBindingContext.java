package dev.sluice.support.testing;

import dev.sluice.api.admin.AdminRoutes;
import dev.sluice.api.binding.BindingContext;
import dev.sluice.api.exchange.Next;
import dev.sluice.api.upstream.Upstream;
import dev.sluice.api.upstream.UpstreamOptions;
import dev.sluice.support.redis.RedisOptions;
import dev.sluice.support.redis.SharedRedis;

import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * A {@link BindingContext} whose executor and scheduler run their tasks, on two small JDK pools: what a binding that
 * talks to Redis ({@link dev.sluice.support.redis.SharedRedis}) needs in a plugin's own tests, where gateway-api's
 * recording {@code TestBindingContext} would hold the replies. Exits, upstreams and the admin listener are refused, or,
 * given a {@code delegate} (such as a {@code TestBindingContext}), its: a binding's own tests then see its exits and
 * admin routes with a real executor and scheduler. Close it after the binding.
 *
 * <pre>{@code
 * try (PoolBindingContext context = new PoolBindingContext()) {
 *     SharedRedis redis = context.openRedis(new RedisOptions(server.url(), "t:", Duration.ofSeconds(1), null));
 * }
 * }</pre>
 */
public final class PoolBindingContext implements BindingContext, AutoCloseable
{
    private final BindingContext delegate;
    private final java.util.List<Executor> watchedLoops = new java.util.concurrent.CopyOnWriteArrayList<>();
    private final ExecutorService pool = Executors.newFixedThreadPool(2, r -> new Thread(r, "test-executor"));
    private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(r ->
    {
        Thread thread = new Thread(r, "test-scheduler");
        thread.setDaemon(true);
        return thread;
    });

    /** A context with nothing but the pools. */
    public PoolBindingContext()
    {
        this(null);
    }

    /** @param delegate what answers everything but the executor and the scheduler, or {@code null} to refuse it */
    public PoolBindingContext(BindingContext delegate)
    {
        this.delegate = delegate;
    }

    @Override
    public Next exit(String bindingName)
    {
        if (delegate == null)
            throw new UnsupportedOperationException("no exits here");
        return delegate.exit(bindingName);
    }

    @Override
    public Upstream upstream(UpstreamOptions options)
    {
        if (delegate == null)
            throw new UnsupportedOperationException("no upstreams here");
        return delegate.upstream(options);
    }

    @Override
    public String env(String name)
    {
        return delegate == null ? null : delegate.env(name);
    }

    @Override
    public String bindingName()
    {
        return delegate == null ? "test" : delegate.bindingName();
    }

    @Override
    public boolean checkOnly()
    {
        return delegate != null && delegate.checkOnly();
    }

    @Override
    public AdminRoutes admin()
    {
        return delegate == null ? BindingContext.super.admin() : delegate.admin();
    }

    @Override
    public Executor executor()
    {
        return pool;
    }

    /** Records {@code loop}, each once (as the runtime's admission would watch it). */
    @Override
    public void watchLoop(Executor loop)
    {
        if (watchedLoops.stream().noneMatch(watched -> watched == loop))
            watchedLoops.add(loop);
    }

    /** @return the loops handed to {@link #watchLoop(Executor)}, in order */
    public java.util.List<Executor> watchedLoops()
    {
        return watchedLoops;
    }

    @Override
    public Scheduler scheduler()
    {
        return LiveScheduler.on(timer);
    }

    /**
     * Opens a handle on the Redis of {@code options} with this context and waits until it is connected (20 s at most).
     *
     * @throws IllegalStateException if it did not connect in time
     */
    public SharedRedis openRedis(RedisOptions options) throws InterruptedException
    {
        SharedRedis redis = SharedRedis.open(options, this);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (!redis.connected() && System.nanoTime() < deadline)
            Thread.sleep(10);
        if (!redis.connected())
        {
            redis.close();
            throw new IllegalStateException("Redis at " + options.redactedUrl() + " did not connect within 20 s");
        }
        return redis;
    }

    @Override
    public void close()
    {
        pool.shutdownNow();
        timer.shutdownNow();
    }
}
