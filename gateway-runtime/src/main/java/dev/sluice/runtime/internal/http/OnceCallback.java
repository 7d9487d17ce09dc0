package dev.sluice.runtime.internal.http;

import org.eclipse.jetty.util.Callback;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Guards the handler's callback: Jetty only logs a second completion at DEBUG, which hides bugs. Here it is an
 * ERROR and a counter that tests assert stays at zero.
 *
 * <p>The first completion runs {@link #beforeSuccess()} or {@link #beforeFailure(Throwable)}, then completes Jetty's
 * callback; every later one is only reported. A subclass that must act at the end of the request (the
 * {@link CompletionRecord} tells the completion listeners) overrides the hooks, so that the guard and what it guards
 * are one object: a field updater rather than an {@code AtomicBoolean} keeps the flag inside it too.</p>
 */
public class OnceCallback implements Callback
{
    private static final Logger LOG = LoggerFactory.getLogger(OnceCallback.class);
    private static final AtomicLong DOUBLE_COMPLETIONS = new AtomicLong();
    private static final AtomicIntegerFieldUpdater<OnceCallback> DONE =
        AtomicIntegerFieldUpdater.newUpdater(OnceCallback.class, "done");

    /** @return how many handler callbacks were completed twice in this JVM (tests assert zero) */
    public static long doubleCompletions()
    {
        return DOUBLE_COMPLETIONS.get();
    }

    private final Callback delegate;
    private final String requestId;
    private volatile int done;

    OnceCallback(Callback delegate, String requestId)
    {
        this.delegate = delegate;
        this.requestId = requestId;
    }

    @Override
    public final void succeeded()
    {
        if (!DONE.compareAndSet(this, 0, 1))
        {
            twice(null);
            return;
        }
        beforeSuccess();
        delegate.succeeded();
    }

    @Override
    public final void failed(Throwable x)
    {
        if (!DONE.compareAndSet(this, 0, 1))
        {
            twice(x);
            return;
        }
        beforeFailure(x);
        delegate.failed(x);
    }

    /** Runs once, on the first completion when it is a success, before Jetty's callback succeeds. */
    protected void beforeSuccess()
    {
    }

    /** Runs once, on the first completion when it is a failure, before Jetty's callback fails. */
    protected void beforeFailure(Throwable failure)
    {
    }

    @Override
    public InvocationType getInvocationType()
    {
        return delegate.getInvocationType();
    }

    /** @return the id of the request whose callback this guards */
    final String requestId()
    {
        return requestId;
    }

    private void twice(Throwable x)
    {
        DOUBLE_COMPLETIONS.incrementAndGet();
        LOG.error("request {}: handler callback completed twice", requestId, x == null ? new IllegalStateException("second completion") : x);
    }
}
