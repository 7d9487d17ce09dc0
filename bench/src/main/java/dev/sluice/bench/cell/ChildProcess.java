package dev.sluice.bench.cell;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * A process the harness started (mock, gateway, nginx), with its output in a log file. Every live child is also
 * registered with a shutdown hook, so an interrupted bench (Ctrl-C, a crash) leaves no process behind; normal code
 * closes children in {@code finally} blocks.
 */
final class ChildProcess implements AutoCloseable
{
    private static final Set<ChildProcess> LIVE = ConcurrentHashMap.newKeySet();

    static
    {
        Runtime.getRuntime().addShutdownHook(new Thread(() ->
        {
            for (ChildProcess p : List.copyOf(LIVE))
            {
                p.kill();
            }
        }, "bench-children-shutdown"));
    }

    private final String name;
    private final Process process;
    private final Path log;
    private final long startedNanos;

    private ChildProcess(String name, Process process, Path log, long startedNanos)
    {
        this.name = name;
        this.process = process;
        this.log = log;
        this.startedNanos = startedNanos;
    }

    /**
     * @param name for messages, e.g. {@code gateway}
     * @param command the command line
     * @param env variables added to the bench's environment
     * @param log where stdout and stderr go
     * @return the started process
     * @throws IOException if it cannot be started
     */
    static ChildProcess start(String name, List<String> command, Map<String, String> env, Path log) throws IOException
    {
        Files.createDirectories(log.toAbsolutePath().getParent());
        ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true)
            .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile())).redirectInput(ProcessBuilder.Redirect.PIPE);
        builder.environment().putAll(env);
        long started = System.nanoTime();
        ChildProcess child = new ChildProcess(name, builder.start(), log, started);
        LIVE.add(child);
        return child;
    }

    /** @return the OS process id */
    long pid()
    {
        return process.pid();
    }

    /** @return {@link System#nanoTime()} right before the process was started */
    long startedNanos()
    {
        return startedNanos;
    }

    /** @return milliseconds since the process was started */
    double millisSinceStart()
    {
        return (System.nanoTime() - startedNanos) / 1e6;
    }

    /** @return the process handle (for /proc reads over it and its descendants) */
    ProcessHandle handle()
    {
        return process.toHandle();
    }

    /** @return whether it still runs */
    boolean isAlive()
    {
        return process.isAlive();
    }

    /** @return the name given at start */
    String name()
    {
        return name;
    }

    /** @return the lines of its log so far that contain {@code text} (none if the log cannot be read) */
    List<String> logLines(String text)
    {
        try (java.util.stream.Stream<String> lines = Files.lines(log, StandardCharsets.UTF_8))
        {
            return lines.filter(l -> l.contains(text)).toList();
        }
        catch (IOException | java.io.UncheckedIOException x)
        {
            return List.of();
        }
    }

    /** @return the last lines of its log, for an error message */
    String tail()
    {
        try
        {
            List<String> lines = Files.readAllLines(log, StandardCharsets.UTF_8);
            return String.join("\n", lines.subList(Math.max(0, lines.size() - 15), lines.size()));
        }
        catch (IOException | RuntimeException x)
        {
            return "(no log: " + x + ")";
        }
    }

    /** Asks it to stop (SIGTERM to it and its descendants), waits up to 5 s, then kills what is left. */
    @Override
    public void close()
    {
        stop(Duration.ofSeconds(5));
    }

    /**
     * @param grace how long it may take to stop after SIGTERM
     */
    void stop(Duration grace)
    {
        List<ProcessHandle> tree = tree();
        for (ProcessHandle p : tree)
        {
            p.destroy();
        }
        long deadline = System.nanoTime() + grace.toNanos();
        for (ProcessHandle p : tree)
        {
            long left = deadline - System.nanoTime();
            try
            {
                if (left > 0)
                    p.onExit().get(left, TimeUnit.NANOSECONDS);
            }
            catch (Exception x)
            {
                // Still running after the grace period (or interrupted): killed below.
                if (x instanceof InterruptedException)
                    Thread.currentThread().interrupt();
            }
        }
        kill();
    }

    private void kill()
    {
        for (ProcessHandle p : tree())
        {
            p.destroyForcibly();
        }
        try
        {
            process.waitFor(5, TimeUnit.SECONDS);
        }
        catch (InterruptedException x)
        {
            Thread.currentThread().interrupt();
        }
        LIVE.remove(this);
    }

    private List<ProcessHandle> tree()
    {
        List<ProcessHandle> all = new ArrayList<>();
        if (process.isAlive())
        {
            process.descendants().forEach(all::add);
            all.add(process.toHandle());
        }
        return all;
    }

    @Override
    public String toString()
    {
        return name + "[pid " + process.pid() + "]";
    }
}
