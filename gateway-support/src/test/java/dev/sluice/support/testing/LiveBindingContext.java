package dev.sluice.support.testing;

import dev.sluice.api.admin.AdminRoutes;
import dev.sluice.api.binding.BindingContext;
import dev.sluice.api.exchange.Next;
import dev.sluice.api.upstream.Upstream;
import dev.sluice.api.upstream.UpstreamOptions;

import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;

/**
 * A {@link BindingContext} whose executor and scheduler really run tasks (two JDK pools: {@code test-executor} threads
 * and one scheduler thread, through {@link LiveScheduler}), for tests of what a binding does in the background or on another thread — a
 * {@code SharedRedis} completing on the executor, its timeout sweep, a store's periodic renewal. Everything else
 * (exits, admin routes, the binding's name, check mode) is the {@code delegate}'s, such as gateway-api's
 * {@code TestBindingContext}; without one, exits and upstreams are refused. Close it in {@code @AfterEach}.
 *
 * <pre>{@code
 * LiveBindingContext context = new LiveBindingContext(new TestBindingContext("next"));
 * SharedRedis redis = SharedRedis.open(options, context);      // replies complete on "test-executor" threads
 * context.close();
 * }</pre>
 */
public final class LiveBindingContext implements BindingContext, AutoCloseable
{
    private final BindingContext delegate;
    private final ExecutorService executor = Executors.newFixedThreadPool(2, r -> new Thread(r, "test-executor"));
    private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(
        r -> new Thread(r, "test-scheduler"));

    /** A context with nothing but the executor and the scheduler. */
    public LiveBindingContext()
    {
        this(null);
    }

    /** @param delegate what answers everything but the executor and the scheduler, or {@code null} */
    public LiveBindingContext(BindingContext delegate)
    {
        this.delegate = delegate;
    }

    @Override
    public Next exit(String bindingName)
    {
        if (delegate == null)
            throw new UnsupportedOperationException("this context has no exits");
        return delegate.exit(bindingName);
    }

    @Override
    public Upstream upstream(UpstreamOptions options)
    {
        if (delegate == null)
            throw new UnsupportedOperationException("this context has no upstreams");
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
        return delegate == null ? BindingContext.super.bindingName() : delegate.bindingName();
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
        return executor;
    }

    @Override
    public Scheduler scheduler()
    {
        return LiveScheduler.on(timer);
    }

    /** Stops both pools. */
    @Override
    public void close()
    {
        executor.shutdownNow();
        timer.shutdownNow();
    }
}
