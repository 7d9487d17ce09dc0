package dev.sluice.runtime.internal.http;

import org.eclipse.jetty.io.ClientConnector;
import org.eclipse.jetty.io.EndPoint;
import org.eclipse.jetty.io.FillInterest;
import org.eclipse.jetty.io.ManagedSelector;
import org.eclipse.jetty.io.SocketChannelEndPoint;
import org.eclipse.jetty.io.Transport;
import org.eclipse.jetty.util.thread.Invocable;
import org.eclipse.jetty.util.thread.Scheduler;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SelectableChannel;
import java.nio.channels.SelectionKey;
import java.nio.channels.SocketChannel;
import java.util.Map;

/**
 * Jetty's {@link SocketChannelEndPoint}, except that once a read has emptied the socket it does not read it again
 * until the selector has seen it readable.
 *
 * <p>A read that returns fewer bytes than the buffer had room for (or none) took everything the socket held. Jetty's
 * connections then read once more before they ask the selector to watch the socket: the client's response after each
 * chunk of a body (when it is read, and again when it is demanded), the server's after each request (twice when the
 * first finds nothing). Between two events of a relayed stream, or after a request, the peer has sent nothing, so that
 * read is a system call that returns {@code EAGAIN}. Here it returns 0 without the call. Every caller of
 * {@link #fill} treats 0 as "nothing yet" and asks for fill interest (a caller that polled instead would wait for
 * ever, which the {@code Content.Source} contract does not allow), and the JDK's selector reports a socket readable
 * for as long as it holds bytes, so bytes that arrived after the emptying read are seen at the selector's next pass:
 * nothing is lost or delayed by more than that pass. A read that filled the room it had says nothing about the socket
 * and is followed by another read, as before. A look that must see the socket as it is now, such as
 * {@link ClientWatch}'s at a client that may have left, reads through {@link #fillNow}.</p>
 *
 * <p>The server's connections also keep their read interest on the selection key from one request to the next. Jetty
 * takes it off whenever the selector reports the socket readable ({@code epoll_ctl}, as the interest drops to none)
 * and puts it back with the next read interest; the next request's read interest comes from the thread that
 * completed the exchange — the upstream's — which then has to wake the server's selector to put it back (an
 * {@code eventfd} write, a context switch, then an {@code epoll_wait}, the {@code eventfd} read and another
 * {@code epoll_ctl} on the selector, per request). Here a readiness
 * that a non-blocking read waited for leaves the interest on the key, and the next read interest, from any thread,
 * asks the selector for nothing ({@link #keepReading}, {@link #needsFillInterest}).</p>
 *
 * <p>Both the server's connections ({@link IdleDeferringConnector}) and the upstream clients'
 * ({@link #clientConnector()}, without the kept interest: their reads come back on the selector's own thread) are made
 * of it. It overrides four methods of Jetty 12.1's endpoint, {@link #fill}, {@link #onSelected},
 * {@link #needsFillInterest} and {@link #replaceKey}; {@code ShortReadEndPointTest} fails if one stops being
 * overridable, and {@code UpstreamBodyReadsTest} if the upstream connections stop skipping the read.</p>
 */
public class ShortReadEndPoint extends SocketChannelEndPoint
{
    // Set by the thread that fills, cleared by the selector. Their accesses are ordered by Jetty's fill interest (a
    // fill that found nothing registers it, the selector's report of it runs the next fill), and a stale value costs
    // one read or one selector pass, never a byte: a plain field.
    private boolean emptied;
    /**
     * Whether the key kept its read interest when the selector last reported the socket readable: written by the
     * selector thread ({@link #keepReading}), read by whichever thread registers a read interest next.
     */
    private volatile boolean readKept;
    /** The endpoint's key, as Jetty's own (private) one: replaced with it when the selector is rebuilt. */
    private volatile SelectionKey key;

    /** Whether a readiness a non-blocking read waited for leaves the key watching the socket ({@link #keepReading}). */
    private final boolean keepsReadInterest;

    /** An endpoint whose key loses its read interest whenever the selector reports the socket readable, as Jetty's. */
    public ShortReadEndPoint(SocketChannel channel, ManagedSelector selector, SelectionKey key, Scheduler scheduler)
    {
        this(channel, selector, key, scheduler, false);
    }

    /**
     * @param keepsReadInterest whether a readiness that a non-blocking read waited for leaves the key watching the
     *                          socket ({@link #keepReading}): the server's connections, whose next read interest comes
     *                          from the thread that completed the exchange
     */
    public ShortReadEndPoint(SocketChannel channel, ManagedSelector selector, SelectionKey key, Scheduler scheduler,
                             boolean keepsReadInterest)
    {
        super(channel, selector, key, scheduler);
        this.key = key;
        this.keepsReadInterest = keepsReadInterest;
    }

    @Override
    public int fill(ByteBuffer buffer) throws IOException
    {
        if (emptied)
            return isInputShutdown() ? -1 : 0;
        int room = room(buffer);
        int filled = super.fill(buffer);
        if (filled >= 0 && filled < room)
            emptied = true;
        return filled;
    }

    /**
     * Reads what the socket holds now, even if a read emptied it since the selector last reported it: for a look at a
     * client that must see an end of stream that arrived meanwhile (which the selector would report only to a
     * registered fill interest).
     *
     * @param buffer a buffer in flush mode
     * @return what {@link #fill} returns
     */
    public int fillNow(ByteBuffer buffer) throws IOException
    {
        emptied = false;
        return fill(buffer);
    }

    @Override
    public Runnable onSelected()
    {
        boolean readable = (key.readyOps() & SelectionKey.OP_READ) != 0;
        // Readable, or writable: a socket reported writable may be read once more for nothing, which is rare. Not when
        // it kept its read interest and no read waits: bytes that arrive while a request is handled (a client that
        // sends its next request before its connection looks for it) are then read once a read waits for them, when
        // the selector reports them again — on the selector's thread, not on the thread that completes the exchange
        // and would otherwise find them with its look for the next request.
        if (!keepsReadInterest || !readable || getFillInterest().isInterested())
            emptied = false;
        // Jetty takes the read interest off the key here; keepReading() may put it back before the key is updated.
        Runnable task = super.onSelected();
        if (readable && keepsReadInterest)
            keepReading();
        return task;
    }

    /**
     * Called on the selector thread when it reported the socket readable and Jetty took the read interest off the
     * key's desired interests: puts it back, so that the key is left as it is (no {@code epoll_ctl}), when a
     * non-blocking read is waiting for it — the task this report returns runs that read on this thread, before the
     * selector looks again, so a readiness left registered cannot report bytes nobody is about to read (a read that
     * leaves some, with no new interest, is reported once more and then loses it). Otherwise the key loses its read
     * interest as in Jetty, and the next {@link #needsFillInterest} asks the selector for it again.
     *
     * <p>A read interest registered from another thread while the key kept it asked the selector for nothing; if this
     * report takes the interest off, that read is still called: it was registered before its thread saw
     * {@code readKept} set (both sides write, then read, a volatile), so before it is cleared here, so before the
     * returned task runs — and the task hands the readiness to whatever read interest is registered when it runs. If
     * its fill then finds the emptied mark (this report saw no read waiting), it asks again, now through the
     * selector, which reports the bytes at its next pass.</p>
     */
    private void keepReading()
    {
        if (readsInline(getFillInterest()))
        {
            super.needsFillInterest();
            readKept = true;
        }
        else
        {
            readKept = false;
        }
    }

    private static boolean readsInline(FillInterest interest)
    {
        return interest.isInterested() && interest.getCallbackInvocationType() == Invocable.InvocationType.NON_BLOCKING;
    }

    /**
     * Registers the read interest with the selector, unless the key kept it when the selector last reported the
     * socket readable ({@link #keepReading}): then the selector already watches the socket, and asking it again would
     * wake it (from another thread, an {@code eventfd} write and a context switch) only to leave the key as it is —
     * what every HTTP/1.1 exchange completed on the upstream's thread did when its connection looked for the next
     * request.
     */
    @Override
    protected void needsFillInterest()
    {
        if (readKept)
            return;
        super.needsFillInterest();
    }

    @Override
    public void replaceKey(SelectionKey newKey)
    {
        super.replaceKey(newKey);
        key = newKey;
    }

    /**
     * @param buffer a buffer in flush mode, as {@link #fill} gets it
     * @return how many bytes {@link SocketChannelEndPoint#fill} can read into it: the room
     * {@code BufferUtil.flipToFill} makes, which reuses an empty buffer whole, appends after the content when there is
     * room, and otherwise compacts
     */
    static int room(ByteBuffer buffer)
    {
        int position = buffer.position();
        int limit = buffer.limit();
        int capacity = buffer.capacity();
        if (position == limit)
            return capacity;
        if (limit < capacity)
            return capacity - limit;
        return position;
    }

    /**
     * @return a client connector whose TCP connections are made of this endpoint; other transports (Unix sockets,
     * QUIC) are made by their own
     */
    public static ClientConnector clientConnector()
    {
        return new ClientConnector()
        {
            @Override
            protected EndPoint newEndPoint(SelectableChannel channel, ManagedSelector selector, SelectionKey key)
            {
                // What Transport.TCP_IP makes (Jetty 12.1), with this class: the transport the request asked for is in
                // the key's attachment.
                if (channel instanceof SocketChannel socket && key.attachment() instanceof Map<?, ?> context
                    && context.get(Transport.CONTEXT_KEY) == Transport.TCP_IP)
                    return new ShortReadEndPoint(socket, selector, key, getScheduler());
                return super.newEndPoint(channel, selector, key);
            }
        };
    }
}
