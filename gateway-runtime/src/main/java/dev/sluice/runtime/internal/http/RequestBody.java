package dev.sluice.runtime.internal.http;

import dev.sluice.api.ErrorKind;
import dev.sluice.api.GatewayException;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpHeaderValue;
import org.eclipse.jetty.http.HttpVersion;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.util.thread.Invocable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.ByteBuffer;
import java.util.Arrays;

/**
 * Reads a chat request's body without blocking, demand-driven, copying each chunk once into an array sized from
 * {@code Content-Length} (grown by doubling when the length is not declared), and enforces the cap on its size.
 *
 * <p>A body over the cap is answered 413 by the {@link Sink}. A client that is still sending when the answer comes and
 * the connection closes gets a reset, and most clients then report the reset, not the answer: so, as Tomcat's
 * "swallow" does, the rest of a body at most {@link #DRAIN_BYTES} over the cap is read and discarded first, and the
 * answer comes after it on a connection that stays usable. A larger body (by its Content-Length, or once over the
 * bound) is answered at once, with {@code Connection: close}. A client that sent {@code Expect: 100-continue} and has
 * not sent its body yet is answered at once: it then never sends it (Jetty sends the 100 only when the body is read).</p>
 *
 * <p>As a plain {@link Runnable} (not {@link Invocable}), its demand is dispatched as Jetty dispatches blocking tasks
 * (docs/operations.md, "Execution model"): the chain runs on the thread that read the last chunk.</p>
 */
final class RequestBody implements Runnable
{
    private static final Logger LOG = LoggerFactory.getLogger(RequestBody.class);
    /** How far over the cap a refused body is read and discarded so that its client can read the 413 (Tomcat: 2 MiB). */
    static final long DRAIN_BYTES = 2L << 20;
    /** The first array for a body of unknown length. */
    private static final int UNDECLARED_START = 8192;

    /** Where the body goes: the whole of it, or the refusal of one over the cap. */
    interface Sink
    {
        /** The body is complete: {@code body} holds exactly its bytes. */
        void bodyRead(CompletionRecord record, byte[] body);

        /** The body is over the cap: answer {@code error} (413); the connection's fate is already decided. */
        void refused(CompletionRecord record, GatewayException error);
    }

    private final CompletionRecord record;
    private final Request request;
    private final int maxBytes;
    private final Sink sink;
    private byte[] body;
    private int length;

    RequestBody(CompletionRecord record, int maxBytes, Sink sink)
    {
        this.record = record;
        this.request = record.request;
        this.maxBytes = maxBytes;
        this.sink = sink;
    }

    /**
     * Refuses a body whose {@code Content-Length} is over the cap, or makes room for it.
     *
     * @return whether the body is to be read ({@link #run()}); {@code false}: it was refused
     */
    boolean admit()
    {
        long declared = request.getLength();
        if (declared > maxBytes)
        {
            refuseOversized(new GatewayException(ErrorKind.REQUEST_TOO_LARGE, "request body is " + declared
                + " bytes, over the limit of " + maxBytes + " bytes"), declared);
            return false;
        }
        body = new byte[declared >= 0 ? (int)declared : UNDECLARED_START];
        return true;
    }

    /** Reads what is there, then demands more; copies each chunk once into {@link #body}. */
    @Override
    public void run()
    {
        while (true)
        {
            Content.Chunk chunk = next(this, "body read");
            if (chunk == null)
                return;
            ByteBuffer buffer = chunk.getByteBuffer();
            int n = buffer.remaining();
            if (length + n > maxBytes)
            {
                boolean last = chunk.isLast();
                chunk.release();
                GatewayException tooLarge = new GatewayException(ErrorKind.REQUEST_TOO_LARGE,
                    "request body is over the limit of " + maxBytes + " bytes");
                body = null;
                if (last)
                    sink.refused(record, tooLarge);
                else
                    refuseOversized(tooLarge, -1);
                return;
            }
            if (length + n > body.length)
                body = Arrays.copyOf(body, Math.min(maxBytes, Math.max(body.length * 2, length + n)));
            buffer.get(buffer.position(), body, length, n);
            length += n;
            record.readBody(n);
            boolean last = chunk.isLast();
            chunk.release();
            if (last)
            {
                byte[] bytes = length == body.length ? body : Arrays.copyOf(body, length);
                body = null;
                sink.bodyRead(record, bytes);
                return;
            }
        }
    }

    /**
     * Reads the next chunk of the body; when there is none yet, demands {@code onAvailable}; when the read failed (the
     * client went away or timed out while sending: nobody is left to answer), fails the request.
     *
     * @param what what the read is for, in the debug log
     * @return the chunk, or {@code null} when there is none to handle now
     */
    private Content.Chunk next(Runnable onAvailable, String what)
    {
        Content.Chunk chunk = request.read();
        if (chunk == null)
        {
            request.demand(onAvailable);
            return null;
        }
        if (Content.Chunk.isFailure(chunk))
        {
            if (LOG.isDebugEnabled())
                LOG.debug("C2G {} {} failed: {}", record.id(), what, String.valueOf(chunk.getFailure()));
            record.failed(chunk.getFailure());
            return null;
        }
        return chunk;
    }

    /**
     * Answers a body over the cap: at once when its client waits for a 100 Continue or it is far over the cap, else
     * after draining it.
     *
     * @param declared the body's Content-Length, or -1 when unknown (chunked, or already partly read)
     */
    private void refuseOversized(GatewayException error, long declared)
    {
        if (length == 0 && request.getHeaders().contains(HttpHeader.EXPECT, HttpHeaderValue.CONTINUE.asString()))
        {
            sink.refused(record, error);
            return;
        }
        if (declared - maxBytes > DRAIN_BYTES)
        {
            closeAfter(error);
            return;
        }
        new Drain(error).run();
    }

    private void closeAfter(GatewayException error)
    {
        if (request.getConnectionMetaData().getHttpVersion() != HttpVersion.HTTP_2)
            record.response.getHeaders().put(HttpHeader.CONNECTION, HttpHeaderValue.CLOSE.asString());
        sink.refused(record, error);
    }

    /** Reads and discards the rest of a refused body, then answers; demand-driven like the body read. */
    private final class Drain implements Runnable, Invocable
    {
        private final GatewayException error;
        private long discarded;

        Drain(GatewayException error)
        {
            this.error = error;
        }

        @Override
        public InvocationType getInvocationType()
        {
            return InvocationType.NON_BLOCKING;
        }

        @Override
        public void run()
        {
            while (true)
            {
                Content.Chunk chunk = next(this, "refused body's drain");
                if (chunk == null)
                    return;
                discarded += chunk.remaining();
                boolean last = chunk.isLast();
                chunk.release();
                if (last)
                {
                    sink.refused(record, error);
                    return;
                }
                if (discarded > DRAIN_BYTES)
                {
                    closeAfter(error);
                    return;
                }
            }
        }
    }
}
