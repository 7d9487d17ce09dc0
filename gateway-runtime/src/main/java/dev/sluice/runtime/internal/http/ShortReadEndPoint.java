package dev.sluice.runtime.internal.http;

import org.eclipse.jetty.io.ClientConnector;
import org.eclipse.jetty.io.EndPoint;
import org.eclipse.jetty.io.ManagedSelector;
import org.eclipse.jetty.io.SocketChannelEndPoint;
import org.eclipse.jetty.io.Transport;
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
 * <p>Both the server's connections ({@link IdleDeferringConnector}) and the upstream clients'
 * ({@link #clientConnector()}) are made of it. It overrides two methods of Jetty 12.1's endpoint, {@link #fill} and
 * {@link #onSelected}; {@code ShortReadEndPointTest} fails if either stops being overridable, and
 * {@code UpstreamBodyReadsTest} if the upstream connections stop skipping the read.</p>
 */
public class ShortReadEndPoint extends SocketChannelEndPoint
{
    // Set by the thread that fills, cleared by the selector. Their accesses are ordered by Jetty's fill interest (a
    // fill that found nothing registers it, the selector's report of it runs the next fill), and a stale value costs
    // one read or one selector pass, never a byte: a plain field.
    private boolean emptied;

    public ShortReadEndPoint(SocketChannel channel, ManagedSelector selector, SelectionKey key, Scheduler scheduler)
    {
        super(channel, selector, key, scheduler);
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
        // Readable, or writable: a socket reported writable may be read once more for nothing, which is rare.
        emptied = false;
        return super.onSelected();
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
