package dev.sluice.bench.cell;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;

/**
 * Free ephemeral ports on 127.0.0.1 for the processes the harness starts (the port is released before the process
 * binds it; a collision fails that process' start loudly).
 */
final class Ports
{
    private Ports()
    {
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
}
