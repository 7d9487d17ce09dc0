package dev.sluice.bench.cell;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;

/**
 * Free ephemeral ports on 127.0.0.1 for the processes the harness starts (the port is released before the process
 * binds it; a collision fails that process' start loudly), and one port that refuses every connection.
 */
final class Ports
{
    private Ports()
    {
    }

    /**
     * A port on 127.0.0.1 that refuses every connection for as long as the bench runs: a socket of the bench's own is
     * bound to it and never listens. Holding it, rather than closing a probe socket as {@link #free()} does, keeps any
     * other process from listening there later, and keeps the kernel from handing it out as the local port of an
     * outgoing connection, which could then connect to itself (TCP simultaneous open).
     *
     * @return the same port on every call
     */
    static int refused()
    {
        return Refused.SOCKET.getLocalPort();
    }

    /** @return a port nothing listens on right now */
    static int free()
    {
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress()))
        {
            socket.setReuseAddress(true);
            return socket.getLocalPort();
        }
        catch (IOException x)
        {
            throw new UncheckedIOException("no free port", x);
        }
    }

    /** Binds the refusing socket on first use. */
    private static final class Refused
    {
        private static final Socket SOCKET = bind();

        private static Socket bind()
        {
            Socket socket = new Socket();
            try
            {
                socket.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
                return socket;
            }
            catch (IOException x)
            {
                try
                {
                    socket.close();
                }
                catch (IOException closing)
                {
                    x.addSuppressed(closing);
                }
                throw new UncheckedIOException("no port to refuse connections on", x);
            }
        }
    }
}
