package dev.sluice.bench.cell;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The Redis server of the cells whose limits live in Redis (S1-5k-limits-redis): Debian's {@code redis-server} on a
 * free loopback port, nothing persisted, started once per bench session when the first such cell runs (on the
 * mock's core when pinned) and stopped when the bench exits. {@link #sample()} reads what it did so far — commands
 * processed and CPU time — so that a repetition's figures per request are the difference of two samples;
 * {@link #roundTrip} measures the loopback round trip the cell's target is stated against.
 */
final class BenchRedis
{
    private static BenchRedis started;

    private final ChildProcess process;
    private final int port;
    private final Pinning pinning;

    private BenchRedis(ChildProcess process, int port, Pinning pinning)
    {
        this.process = process;
        this.port = port;
        this.pinning = pinning;
    }

    /**
     * @param session where its log goes and where it is pinned
     * @return the session's server, started on first use
     */
    static synchronized BenchRedis get(Session session) throws IOException
    {
        if (started != null && started.process.isAlive())
            return started;
        String binary = Files.isExecutable(Path.of("/usr/bin/redis-server")) ? "/usr/bin/redis-server" : "redis-server";
        int port = Ports.free();
        List<String> command = session.pinning().harness(new ArrayList<>(List.of(binary, "--port",
            Integer.toString(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--protected-mode", "no",
            "--loglevel", "warning")));
        ChildProcess process = ChildProcess.start("redis", command, Map.of(), session.raw().resolve("logs/redis.log"));
        BenchRedis redis = new BenchRedis(process, port, session.pinning());
        long deadline = System.nanoTime() + 20_000_000_000L;
        while (true)
        {
            try
            {
                redis.info("server");
                break;
            }
            catch (IOException notYet)
            {
                if (!process.isAlive() || System.nanoTime() > deadline)
                    throw new IOException("redis-server did not start (install Debian's redis-server): " + process.tail());
                try
                {
                    Thread.sleep(20);
                }
                catch (InterruptedException interrupted)
                {
                    Thread.currentThread().interrupt();
                    throw new IOException(interrupted);
                }
            }
        }
        started = redis;
        return redis;
    }

    /** @return {@code redis://127.0.0.1:PORT} */
    String url()
    {
        return "redis://127.0.0.1:" + port;
    }

    /**
     * What the server did since it started, at the time of the call.
     *
     * @param commands commands processed (INFO stats {@code total_commands_processed}; the sample's own INFO counts)
     * @param scripts  {@code EVALSHA} calls ({@code INFO commandstats})
     * @param cpuNanos CPU time of the server process, user and system
     */
    record Sample(long commands, long scripts, long cpuNanos)
    {
        /**
         * @return the figures from {@code before} to this sample, per {@code requests}: the scripts the gateways sent,
         *         the commands Redis ran (the scripts' own calls included: TIME, HMGET, ZADD …) and its CPU time
         */
        String perRequest(Sample before, long requests)
        {
            if (requests <= 0)
                return "no requests";
            return String.format(java.util.Locale.ROOT, "%.2f scripts sent, %.1f commands run inside Redis and %.1f µs"
                + " of Redis CPU per request", (scripts - before.scripts) / (double) requests,
                (commands - before.commands - 2) / (double) requests, (cpuNanos - before.cpuNanos) / 1e3 / requests);
        }
    }

    /** @return the server's figures now */
    Sample sample() throws IOException
    {
        long commands = 0;
        for (String line : info("stats").split("\r\n"))
            if (line.startsWith("total_commands_processed:"))
                commands = Long.parseLong(line.substring(line.indexOf(':') + 1).trim());
        long scripts = 0;
        for (String line : info("commandstats").split("\r\n"))
            if (line.startsWith("cmdstat_evalsha:calls="))
                scripts = Long.parseLong(line.substring("cmdstat_evalsha:calls=".length(), line.indexOf(',')));
        return new Sample(commands, scripts, ProcFs.treeCpuNanos(process.handle()));
    }

    /**
     * The loopback round trip a gateway's command takes, measured by {@link RedisPing} where the gateway runs (its core
     * when pinned), 2,000 pings back to back and 2,000 at the gateway's request rate. Call it between repetitions, when
     * the gateway's core is idle.
     *
     * @param perSecond the request rate of one gateway process (the paired cell's half)
     * @return {@code "back to back p50 23 µs, p99 47 µs; one every 400 µs p50 95 µs, p99 160 µs"}, or why it could
     *         not be measured
     */
    String roundTrip(double perSecond)
    {
        long interval = Math.round(1e6 / perSecond);
        return "back to back " + ping(0) + "; one every " + interval + " µs " + ping(interval);
    }

    private String ping(long intervalMicros)
    {
        String jvm = ProcessHandle.current().info().command().orElse("java");
        List<String> command = pinning.target(new ArrayList<>(List.of(jvm, "-XX:TieredStopAtLevel=1",
            "-cp", System.getProperty("java.class.path"), RedisPing.class.getName(), Integer.toString(port),
            Long.toString(intervalMicros), "2000")));
        try
        {
            Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
            // Its output is a line or a stack trace: the pipe holds it until the process has exited.
            if (!p.waitFor(60, java.util.concurrent.TimeUnit.SECONDS))
            {
                p.destroyForcibly();
                return "not measured (no answer within 60 s)";
            }
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
            if (p.exitValue() != 0)
                return "not measured (" + out + ")";
            return out;
        }
        catch (IOException x)
        {
            return "not measured (" + x.getMessage() + ")";
        }
        catch (InterruptedException x)
        {
            Thread.currentThread().interrupt();
            return "not measured (interrupted)";
        }
    }

    private String info(String section) throws IOException
    {
        try (Socket socket = new Socket())
        {
            socket.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 1_000);
            socket.setSoTimeout(5_000);
            OutputStream out = socket.getOutputStream();
            out.write(("*2\r\n$4\r\nINFO\r\n$" + section.length() + "\r\n" + section + "\r\n")
                .getBytes(StandardCharsets.US_ASCII));
            out.flush();
            BufferedReader in = new BufferedReader(new InputStreamReader(socket.getInputStream(), StandardCharsets.UTF_8));
            String head = in.readLine();
            if (head == null || !head.startsWith("$"))
                throw new IOException("unexpected INFO reply: " + head);
            char[] body = new char[Integer.parseInt(head.substring(1))];
            int read = 0;
            while (read < body.length)
            {
                int n = in.read(body, read, body.length - read);
                if (n < 0)
                    throw new IOException("INFO reply cut");
                read += n;
            }
            return new String(body);
        }
    }
}
