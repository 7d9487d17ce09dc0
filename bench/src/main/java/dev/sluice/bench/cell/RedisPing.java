package dev.sluice.bench.cell;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Locale;
import java.util.concurrent.locks.LockSupport;

/**
 * A Redis round trip at a request's pace: one {@code PING} every {@code interval} on one connection, the time from
 * writing it to reading {@code +PONG}. Back to back, a round trip finds both cores awake; at a gateway's request rate
 * the cores sleep between requests and each round trip pays their wake-ups, which is what a request's command pays.
 * {@link BenchRedis#roundTrip} runs it in its own JVM on the gateway's core.
 *
 * <pre>java dev.sluice.bench.cell.RedisPing PORT INTERVAL_MICROS COUNT</pre>
 *
 * Prints {@code p50 95 µs, p99 160 µs} over the last three quarters of the pings (the first quarter warms the JIT).
 */
public final class RedisPing
{
    private static final byte[] PING = "*1\r\n$4\r\nPING\r\n".getBytes(StandardCharsets.US_ASCII);
    private static final int PONG = "+PONG\r\n".length();

    private RedisPing()
    {
    }

    public static void main(String[] args) throws IOException
    {
        if (args.length != 3)
        {
            System.err.println("usage: RedisPing PORT INTERVAL_MICROS COUNT");
            System.exit(2);
        }
        int port = Integer.parseInt(args[0]);
        long interval = Long.parseLong(args[1]) * 1_000;
        int count = Integer.parseInt(args[2]);
        long[] nanos = new long[count];
        byte[] reply = new byte[64];
        try (Socket socket = new Socket())
        {
            socket.setTcpNoDelay(true);
            // No read timeout: the JDK then reads in one blocking call, as a client's event loop reads when woken,
            // instead of a non-blocking read, a poll and a second read. The caller bounds the process' life.
            socket.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 1_000);
            OutputStream out = socket.getOutputStream();
            InputStream in = socket.getInputStream();
            for (int i = 0; i < count; i++)
            {
                long start = System.nanoTime();
                out.write(PING);
                int read = 0;
                while (read < PONG)
                {
                    int n = in.read(reply, read, reply.length - read);
                    if (n < 0)
                        throw new IOException("Redis closed the connection");
                    read += n;
                }
                nanos[i] = System.nanoTime() - start;
                if (interval > 0)
                    LockSupport.parkNanos(interval);
            }
        }
        System.out.println(summary(Arrays.copyOfRange(nanos, count / 4, count)));
    }

    /** @return the p50 and p99 of {@code nanos} in µs, as {@link BenchRedis#roundTrip} reports them */
    static String summary(long[] nanos)
    {
        long[] sorted = nanos.clone();
        Arrays.sort(sorted);
        return String.format(Locale.ROOT, "p50 %.0f µs, p99 %.0f µs", sorted[sorted.length / 2] / 1e3,
            sorted[Math.min(sorted.length - 1, (int) (sorted.length * 0.99))] / 1e3);
    }
}
