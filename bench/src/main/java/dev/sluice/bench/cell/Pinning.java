package dev.sluice.bench.cell;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Where each process of a pinned session runs: the measured target (the gateway, or one reference at a time) alone on
 * {@link #TARGET_CPUS}, everything that drives or answers it (the bench JVM with the load generator, the mock) on
 * {@link #HARNESS_CPUS}.
 *
 * <p>Why: on a 2-core machine an unpinned gateway competes with the generator and the mock for both cores, so its
 * figures move with whatever the scheduler did; one core each makes a target's CPU its own and puts every
 * reference on the same footing. A JVM reads its core count from its affinity at start, so a pinned JVM target is
 * told {@code -XX:ActiveProcessorCount=1} explicitly as well: the figure is then stated, not inferred.</p>
 */
final class Pinning
{
    /** The cores of the measured target. */
    static final String TARGET_CPUS = "1";
    /** The cores of the bench JVM, the load generator and the mock. */
    static final String HARNESS_CPUS = "0";
    /** What a pinned target JVM is told its core count is. */
    static final int TARGET_ACTIVE_PROCESSORS = 1;

    private final boolean enabled;

    /**
     * @param enabled whether the session pins
     */
    Pinning(boolean enabled)
    {
        this.enabled = enabled;
    }

    /** @return whether the session pins */
    boolean enabled()
    {
        return enabled;
    }

    /**
     * @param command a target's command line
     * @return it run through {@code taskset -c 1} when pinning, else unchanged
     */
    List<String> target(List<String> command)
    {
        return wrap(TARGET_CPUS, command);
    }

    /**
     * @param command a harness process' command line (the mock)
     * @return it run through {@code taskset -c 0} when pinning, else unchanged
     */
    List<String> harness(List<String> command)
    {
        return wrap(HARNESS_CPUS, command);
    }

    private List<String> wrap(String cpus, List<String> command)
    {
        if (!enabled)
            return command;
        List<String> all = new ArrayList<>(List.of("taskset", "-c", cpus));
        all.addAll(command);
        return List.copyOf(all);
    }

    /** @return the JVM flag a pinned target JVM gets, or an empty string */
    String jvmFlags()
    {
        return enabled ? "-XX:ActiveProcessorCount=" + TARGET_ACTIVE_PROCESSORS : "";
    }

    /** @return the core count a target JVM is told, or null when it is left to the JVM */
    Integer activeProcessorCount()
    {
        return enabled ? TARGET_ACTIVE_PROCESSORS : null;
    }

    /**
     * Pins this JVM (every thread, existing and future: new threads inherit their creator's affinity) to the harness
     * cores when it is not already there, for a bench started without {@code bench/run}.
     *
     * @return a note for the report, or null when nothing had to be done or pinning is off
     */
    String pinSelf()
    {
        if (!enabled)
            return null;
        long pid = ProcessHandle.current().pid();
        String now = cpus(pid);
        if (HARNESS_CPUS.equals(now))
            return null;
        try
        {
            Process p = new ProcessBuilder("taskset", "-a", "-c", "-p", HARNESS_CPUS, Long.toString(pid))
                .redirectErrorStream(true).start();
            p.getInputStream().readAllBytes();
            if (p.waitFor(10, TimeUnit.SECONDS) && p.exitValue() == 0)
                return "the bench JVM was on cores " + now + "; pinned it to core " + HARNESS_CPUS + " (taskset -a -p)";
            return "could not pin the bench JVM to core " + HARNESS_CPUS + " (taskset exited " + p.exitValue() + ")";
        }
        catch (IOException x)
        {
            return "could not pin the bench JVM to core " + HARNESS_CPUS + ": " + x.getMessage();
        }
        catch (InterruptedException x)
        {
            Thread.currentThread().interrupt();
            return "interrupted while pinning the bench JVM";
        }
    }

    /**
     * @param pid a process
     * @return the cores it may run on ({@code Cpus_allowed_list} in {@code /proc/<pid>/status}, e.g. {@code 1} or
     * {@code 0-1}), or null if it cannot be read
     */
    static String cpus(long pid)
    {
        try
        {
            return cpusAllowed(Files.readString(Path.of("/proc", Long.toString(pid), "status"), StandardCharsets.US_ASCII));
        }
        catch (IOException | RuntimeException x)
        {
            return null;
        }
    }

    /**
     * @param status the content of {@code /proc/<pid>/status}
     * @return its {@code Cpus_allowed_list}, or null
     */
    static String cpusAllowed(String status)
    {
        for (String line : status.split("\n"))
        {
            if (line.startsWith("Cpus_allowed_list:"))
                return line.substring("Cpus_allowed_list:".length()).trim();
        }
        return null;
    }
}
