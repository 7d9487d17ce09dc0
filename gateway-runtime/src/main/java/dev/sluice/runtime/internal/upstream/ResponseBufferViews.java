package dev.sluice.runtime.internal.upstream;

import org.eclipse.jetty.io.ByteBufferPool;
import org.eclipse.jetty.io.RetainableByteBuffer;

/**
 * The shared buffer pool as an upstream client takes from it: a buffer of the size HTTP/1.1 responses are read into
 * comes as a {@link java.nio.ByteBuffer} view of its own (a duplicate of the pooled one, released with it), so nothing
 * done through a view after its release reaches whoever holds the memory next. Other sizes pass through.
 *
 * <p>jetty-client's HTTP/1.1 receiver needs it. A client binding reads a response's body at once in the callback that
 * delivers its head (no hand-off to another thread), so the read parses on inside the parse that delivered the head.
 * When the provider closes the connection there (a head, then no body), that inner parse fails the response and gives
 * the connection's network buffer back to the pool; the failure's listeners run before the outer parse resumes (a
 * fallback's request may be sent and answered meanwhile), and the outer parse then clears the buffer it still refers
 * to. Whoever took that buffer in between had its bytes cleared under it: an answer lost (the fallback waited for
 * its idle timeout), a response head read as malformed, a position past its limit. Through a view of its own, the
 * clear touches only the released view.
 *
 * <p>The cost is one small object per response buffer taken: one per response, or per burst of a stream's events.
 */
final class ResponseBufferViews extends ByteBufferPool.Wrapper
{
    private final int responseBufferSize;

    /**
     * @param pool               the shared pool
     * @param responseBufferSize the size the client's HTTP/1.1 receiver asks for
     *                           ({@link org.eclipse.jetty.client.HttpClient#getResponseBufferSize()})
     */
    ResponseBufferViews(ByteBufferPool pool, int responseBufferSize)
    {
        super(pool);
        this.responseBufferSize = responseBufferSize;
    }

    @Override
    public RetainableByteBuffer.Mutable acquire(int size, boolean direct)
    {
        RetainableByteBuffer.Mutable pooled = super.acquire(size, direct);
        if (size != responseBufferSize)
            return pooled;
        return RetainableByteBuffer.wrap(pooled.getByteBuffer().duplicate(), pooled);
    }
}
