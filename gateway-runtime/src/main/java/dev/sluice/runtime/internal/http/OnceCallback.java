package dev.sluice.runtime.internal.http;

import org.eclipse.jetty.util.Callback;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Guards the handler's callback: Jetty only logs a second completion at DEBUG, which hides bugs. Here it is an
 * ERROR and a counter that tests assert stays at zero.
 */
public final class OnceCallback implements Callback
{
    private static final Logger LOG = LoggerFactory.getLogger(OnceCallback.class);
    private static final AtomicLong DOUBLE_COMPLETIONS = new AtomicLong();

    /** @return how many handler callbacks were completed twice in this JVM (tests assert zero) */
    public static long doubleCompletions()
    {
        return DOUBLE_COMPLETIONS.get();
    }

    private final Callback delegate;
    private final String requestId;
    private final AtomicBoolean done = new AtomicBoolean();

    OnceCallback(Callback delegate, String requestId)
    {
        this.delegate = delegate;
        this.requestId = requestId;
    }

    @Override
    public void succeeded()
    {
        if (done.compareAndSet(false, true))
            delegate.succeeded();
        else
            twice(null);
    }

    @Override
    public void failed(Throwable x)
    {
        if (done.compareAndSet(false, true))
            delegate.failed(x);
        else
            twice(x);
    }

    @Override
    public InvocationType getInvocationType()
    {
        return delegate.getInvocationType();
    }

    private void twice(Throwable x)
    {
        twice(requestId, x);
    }

    /** Reports a second completion of request {@code requestId}'s handler callback. */
    static void twice(String requestId, Throwable x)
    {
        DOUBLE_COMPLETIONS.incrementAndGet();
        LOG.error("request {}: handler callback completed twice", requestId, x == null ? new IllegalStateException("second completion") : x);
    }
}
