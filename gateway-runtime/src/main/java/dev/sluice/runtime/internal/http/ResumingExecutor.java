package dev.sluice.runtime.internal.http;

import org.eclipse.jetty.server.internal.HttpConnection;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.thread.Invocable;

import java.util.concurrent.Executor;

/**
 * The executor of the client listener's connections: the shared pool, except that an HTTP/1.1 connection resumed with
 * nothing left to parse waits for its next request where it is instead of in a pool thread.
 *
 * <p>When an exchange completes on another thread than the one that parsed its request — every proxied request does:
 * the answer is written from the upstream's thread — Jetty 12.1's HTTP/1.1 connection resumes by handing itself to its
 * executor, whatever its request buffer holds. The pool thread that takes it finds the buffer empty, reads the socket
 * (nothing yet: the client has only now got its answer), registers for reading and goes back to sleep. That is a
 * thread wake-up, a context switch and a failed read per request, paid on the upstream's thread's core just when a
 * backlog must drain. Here the connection instead registers for reading at once, on the thread that completed the
 * exchange, with a callback of the server's invocation type (what the connection's own read callback has): the
 * selector runs it when the next request arrives, exactly as for any request that arrives on an idle connection. A
 * connection that still holds bytes (a pipelined request) is handed to the pool as before, and so is every other
 * job.</p>
 */
final class ResumingExecutor implements Executor
{
    private final Executor pool;

    /** @param pool where every job goes, but the resumption of a connection with nothing to parse */
    ResumingExecutor(Executor pool)
    {
        this.pool = pool;
    }

    @Override
    public void execute(Runnable job)
    {
        if (job instanceof HttpConnection connection && connection.isRequestBufferEmpty())
        {
            connection.tryFillInterested(new NextRequest(connection));
            return;
        }
        pool.execute(job);
    }

    /** Reads the connection's next request when it arrives, as the connection's own read callback does. */
    private record NextRequest(HttpConnection connection) implements Callback
    {
        @Override
        public void succeeded()
        {
            connection.onFillable();
        }

        @Override
        public void failed(Throwable failure)
        {
            connection.onFillInterestedFailed(failure);
        }

        @Override
        public Invocable.InvocationType getInvocationType()
        {
            return connection.getServer().getInvocationType();
        }
    }

    @Override
    public String toString()
    {
        return "resuming " + pool;
    }
}
