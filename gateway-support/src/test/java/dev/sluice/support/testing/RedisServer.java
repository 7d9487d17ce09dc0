package dev.sluice.support.testing;

import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A real {@code redis-server} (Debian's package; {@code REDIS_SERVER} names another binary) on a free loopback port,
 * for tests of state shared through Redis. Nothing is persisted; the server runs until {@link #close()}. It can be
 * stopped and started again on the same port ({@link #stop()}, {@link #start()}) and paused ({@link #pause()},
 * {@link #resume()}) to test what a gateway does while Redis is away or slow. {@link #command} is a small synchronous
 * client for a test's own assertions.
 *
 * <pre>{@code
 * try (RedisServer redis = RedisServer.started()) {
 *     String url = redis.url();                       // redis://127.0.0.1:PORT
 *     redis.stop(); redis.start();                    // same port, empty again
 * }
 * }</pre>
 */
public final class RedisServer implements AutoCloseable
{
    private final int port;
    private final Path dir;
    private Process process;

    private RedisServer(int port, Path dir)
    {
        this.port = port;
        this.dir = dir;
    }

    /** @return a server started on a free loopback port */
    public static RedisServer started() throws IOException
    {
        IOException last = null;
        for (int attempt = 0; attempt < 5; attempt++)
        {
            int port;
            try (ServerSocket probe = new ServerSocket(0, 1, InetAddress.getLoopbackAddress()))
            {
                port = probe.getLocalPort();
            }
            RedisServer server = new RedisServer(port, Files.createTempDirectory("sluice-redis"));
            try
            {
                server.start();
                return server;
            }
            catch (IOException taken)
            {
                last = taken;
                server.close();
            }
        }
        throw last;
    }

    /** @return where the binary is */
    public static String binary()
    {
        String configured = System.getenv("REDIS_SERVER");
        if (configured != null && !configured.isBlank())
            return configured;
        for (String candidate : List.of("/usr/bin/redis-server", "/usr/local/bin/redis-server", "/usr/sbin/redis-server"))
            if (Files.isExecutable(Path.of(candidate)))
                return candidate;
        return "redis-server";
    }

    /** Starts the server (again) on its port and waits until it answers {@code PING}. */
    public synchronized void start() throws IOException
    {
        if (process != null && process.isAlive())
            return;
        ProcessBuilder builder = new ProcessBuilder(binary(), "--port", Integer.toString(port), "--bind", "127.0.0.1",
            "--save", "", "--appendonly", "no", "--protected-mode", "no", "--daemonize", "no",
            "--dir", dir.toString(), "--loglevel", "warning")
            .redirectErrorStream(true)
            .redirectOutput(dir.resolve("redis.log").toFile());
        try
        {
            process = builder.start();
        }
        catch (IOException missing)
        {
            throw new IOException("cannot run " + binary() + " (install Debian's redis-server, or set REDIS_SERVER): "
                + missing.getMessage(), missing);
        }
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (System.nanoTime() < deadline)
        {
            if (!process.isAlive())
                throw new IOException("redis-server exited with " + process.exitValue() + ": "
                    + Files.readString(dir.resolve("redis.log")));
            try
            {
                if ("PONG".equals(command("PING")))
                    return;
            }
            catch (IOException notYet)
            {
                // Not listening yet.
            }
            sleep(20);
        }
        throw new IOException("redis-server on port " + port + " did not answer PING within 20 s");
    }

    /** Stops the server (its data is gone); {@link #start()} brings an empty one back on the same port. */
    public synchronized void stop()
    {
        if (process == null)
            return;
        process.destroy();
        try
        {
            if (!process.waitFor(10, TimeUnit.SECONDS))
            {
                process.destroyForcibly();
                process.waitFor(10, TimeUnit.SECONDS);
            }
        }
        catch (InterruptedException interrupted)
        {
            Thread.currentThread().interrupt();
        }
        process = null;
    }

    /** Stops the process with {@code SIGSTOP}: connections stay open and nothing is answered. */
    public synchronized void pause() throws IOException
    {
        signal("STOP");
    }

    /** Continues a {@linkplain #pause() paused} process. */
    public synchronized void resume() throws IOException
    {
        signal("CONT");
    }

    private void signal(String name) throws IOException
    {
        try
        {
            int exit = new ProcessBuilder("kill", "-" + name, Long.toString(process.pid())).inheritIO().start().waitFor();
            if (exit != 0)
                throw new IOException("kill -" + name + " exited with " + exit);
        }
        catch (InterruptedException interrupted)
        {
            Thread.currentThread().interrupt();
            throw new IOException(interrupted);
        }
    }

    /** @return the port */
    public int port()
    {
        return port;
    }

    /** @return {@code redis://127.0.0.1:PORT} */
    public String url()
    {
        return "redis://127.0.0.1:" + port;
    }

    /**
     * Sends one command on a new connection and reads its reply.
     *
     * @return a simple string or bulk string as a {@code String} ({@code null} for a nil), an integer as a
     *         {@code Long}, an array as a {@code List}
     * @throws IOException on an error reply, or when the server does not answer within 5 s
     */
    public Object command(String... args) throws IOException
    {
        try (Socket socket = new Socket())
        {
            socket.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 1_000);
            socket.setSoTimeout(5_000);
            StringBuilder request = new StringBuilder("*").append(args.length).append("\r\n");
            for (String arg : args)
            {
                byte[] bytes = arg.getBytes(StandardCharsets.UTF_8);
                request.append('$').append(bytes.length).append("\r\n").append(arg).append("\r\n");
            }
            OutputStream out = socket.getOutputStream();
            out.write(request.toString().getBytes(StandardCharsets.UTF_8));
            out.flush();
            return read(new BufferedInputStream(socket.getInputStream()));
        }
    }

    private static Object read(InputStream in) throws IOException
    {
        int type = in.read();
        String line = line(in);
        switch (type)
        {
            case '+':
                return line;
            case '-':
                throw new IOException("Redis answered an error: " + line);
            case ':':
                return Long.parseLong(line);
            case '$':
            {
                int length = Integer.parseInt(line);
                if (length < 0)
                    return null;
                byte[] bytes = in.readNBytes(length + 2);
                return new String(bytes, 0, length, StandardCharsets.UTF_8);
            }
            case '*':
            {
                int count = Integer.parseInt(line);
                if (count < 0)
                    return null;
                List<Object> items = new ArrayList<>(count);
                for (int i = 0; i < count; i++)
                    items.add(read(in));
                return items;
            }
            default:
                throw new IOException("unexpected reply type " + (char) type);
        }
    }

    private static String line(InputStream in) throws IOException
    {
        StringBuilder line = new StringBuilder();
        int c;
        while ((c = in.read()) != '\r')
        {
            if (c < 0)
                throw new IOException("connection closed mid-reply");
            line.append((char) c);
        }
        in.read();
        return line.toString();
    }

    private static void sleep(long millis)
    {
        try
        {
            Thread.sleep(millis);
        }
        catch (InterruptedException interrupted)
        {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public synchronized void close()
    {
        if (process != null && !process.isAlive())
            process = null;
        if (process != null)
        {
            try
            {
                resume();
            }
            catch (IOException notPaused)
            {
                // It was running.
            }
        }
        stop();
        try (var files = Files.list(dir))
        {
            for (Path file : (Iterable<Path>) files::iterator)
                Files.deleteIfExists(file);
            Files.deleteIfExists(dir);
        }
        catch (IOException left)
        {
            // A temporary folder left behind.
        }
    }
}
