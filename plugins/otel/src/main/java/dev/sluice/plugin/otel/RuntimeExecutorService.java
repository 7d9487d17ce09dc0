package dev.sluice.plugin.otel;

import java.util.List;
import java.util.concurrent.AbstractExecutorService;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;

/**
 * The runtime's shared {@link Executor} as the {@link java.util.concurrent.ExecutorService} the OTLP exporter's
 * builder asks for ({@code setExecutorService}), so that its HTTP sender runs its requests on the runtime's pool
 * instead of a pool of its own. The exporter never shuts down an executor it was given; shutting this view down only
 * marks it, the runtime's pool is the runtime's to stop. A task submitted after the runtime stopped is refused with
 * {@link java.util.concurrent.RejectedExecutionException}, which the sender reports as a failed export.
 */
final class RuntimeExecutorService extends AbstractExecutorService
{
    private final Executor executor;
    private volatile boolean shutdown;

    RuntimeExecutorService(Executor executor)
    {
        this.executor = executor;
    }

    @Override
    public void execute(Runnable command)
    {
        executor.execute(command);
    }

    @Override
    public void shutdown()
    {
        shutdown = true;
    }

    @Override
    public List<Runnable> shutdownNow()
    {
        shutdown = true;
        return List.of();
    }

    @Override
    public boolean isShutdown()
    {
        return shutdown;
    }

    @Override
    public boolean isTerminated()
    {
        return shutdown;
    }

    @Override
    public boolean awaitTermination(long timeout, TimeUnit unit)
    {
        return shutdown;
    }

    @Override
    public String toString()
    {
        return "the runtime's executor";
    }
}
