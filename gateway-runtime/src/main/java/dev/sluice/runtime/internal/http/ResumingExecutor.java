package dev.sluice.runtime.internal.http;

import org.eclipse.jetty.io.ManagedSelector;
import org.eclipse.jetty.server.internal.HttpConnection;
import org.eclipse.jetty.util.thread.Invocable;

import java.util.concurrent.Executor;

/**
 * The executor of the client listener's connections: the shared pool, except that an HTTP/1.1 connection resumed with
 * nothing left to parse looks for its next request on the thread that resumed it instead of in a pool thread, and that
 * a new connection is made on the selector that registered it.
 *
 * <p>When an exchange completes on another thread than the one that parsed its request — every proxied request does:
 * the answer is written from the upstream's thread — Jetty 12.1's HTTP/1.1 connection resumes by handing itself to its
 * executor, whatever its request buffer holds. The pool thread that takes it finds the buffer empty, reads the socket
 * (nothing yet: the client has only now got its answer), releases the buffer, registers for reading and goes back to
 * sleep: a thread wake-up and a context switch per request, paid just when a backlog must drain. Here the connection
 * runs that same step ({@link HttpConnection#onFillable()}) at once, on the thread that completed the exchange, when
 * the server's handlers never block. A connection that still holds bytes (a pipelined request, which that step would
 * go on to handle) is handed to the pool as before, so that the upstream's thread does not take on client requests, and
 * so is every other job.</p>
 *
 * <p>The same for a new connection: Jetty's selector registers an accepted socket and hands the job that makes it an
 * endpoint and a connection ({@code ManagedSelector}'s {@code Accept}) to its executor — a thread wake-up per
 * connection, paid when a backlog of clients connects at once (after a process pause, a client's pool grows by
 * hundreds). Making them creates objects and registers for reading: nothing blocks (a TLS handshake, when there is one,
 * runs later, on reads), so the selector runs that job itself. Jetty keeps that class private: it is recognised by
 * name, and if an upgrade renames it, its jobs go to the pool as before ({@code ResumingExecutorTest} says so).</p>
 */
final class ResumingExecutor implements Executor
{
    /** Jetty's job that makes an accepted socket an endpoint and a connection, or {@code null} if it is not found. */
    static final Class<?> ACCEPT = nested(ManagedSelector.class, "Accept");

    private final Executor pool;

    /**
     * @param pool where every job goes, but the resumption of a connection with nothing to parse and the making of a new
     *             connection
     */
    ResumingExecutor(Executor pool)
    {
        this.pool = pool;
    }

    @Override
    public void execute(Runnable job)
    {
        if (job instanceof HttpConnection connection && connection.isRequestBufferEmpty()
            && connection.getServer().getInvocationType() == Invocable.InvocationType.NON_BLOCKING)
        {
            connection.onFillable();
            return;
        }
        if (job.getClass() == ACCEPT)
        {
            job.run();
            return;
        }
        pool.execute(job);
    }

    private static Class<?> nested(Class<?> outer, String name)
    {
        for (Class<?> nested : outer.getDeclaredClasses())
        {
            if (nested.getSimpleName().equals(name))
                return nested;
        }
        return null;
    }

    @Override
    public String toString()
    {
        return "resuming " + pool;
    }
}
