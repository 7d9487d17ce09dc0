package dev.sluice.bench.cell;

import java.util.List;
import java.util.Map;

/**
 * Where and how a bench session ran: printed at the top of the report so that a figure is never read without its
 * machine and settings.
 *
 * @param started    ISO time the session started
 * @param finished   ISO time it finished (or the time of the last partial write)
 * @param host       the host name
 * @param cores      available processors
 * @param memoryMiB  physical memory
 * @param java       the bench JVM's version
 * @param kernel     {@code uname -r}
 * @param git        the commit (with {@code -dirty} if the tree has changes)
 * @param command    the bench command line
 * @param target     what "gateway" means in this session (the distribution, or a URL)
 * @param durations  warm-up/window settings
 * @param nginx      the references: nginx's version and workers, HAProxy's, the Jetty proxy's, or why unavailable
 * @param stages     whether the per-stage table was enabled, and why not
 * @param clockTicks CLK_TCK
 * @param generator  the load generator class
 * @param notes      session-wide remarks
 */
record RunInfo(String started, String finished, String host, int cores, long memoryMiB, String java, String kernel,
               String git, String command, String target, Map<String, String> durations, String nginx, String stages,
               long clockTicks, String generator, List<String> notes)
{
    /**
     * @param time when
     * @return a copy finished then
     */
    RunInfo finishedAt(String time)
    {
        return new RunInfo(started, time, host, cores, memoryMiB, java, kernel, git, command, target, durations, nginx,
            stages, clockTicks, generator, notes);
    }
}
