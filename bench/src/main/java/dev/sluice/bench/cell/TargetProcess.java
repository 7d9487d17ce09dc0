package dev.sluice.bench.cell;

import java.net.URI;

/**
 * A measured process the harness starts per repetition: the gateway or one of the references (nginx, HAProxy, the
 * bare Jetty proxy). The runner drives load at {@link #uri(String)} and watches {@link #process()} from {@code /proc}.
 */
interface TargetProcess extends AutoCloseable
{
    /** @return the target's name in reports: {@code gateway}, {@code nginx}, {@code haproxy}, {@code jetty-proxy} */
    String name();

    /** @return the process (its descendants are part of the target: nginx's workers) */
    ChildProcess process();

    /**
     * @param path a path
     * @return its URL on this target
     */
    URI uri(String path);

    /** @return the JVM's GC log, or null for a target that is not a JVM */
    GcLog gcLog();

    /** @return whether the target is a JVM (it gets the JVM warm-up, allocation and GC figures) */
    default boolean jvm()
    {
        return gcLog() != null;
    }

    /** @return the {@code -XX:ActiveProcessorCount} it was started with, or null (not a JVM, or not pinned) */
    Integer activeProcessorCount();

    /** @return milliseconds from the process' start to its first answer (the readiness check's 200) */
    double firstAnswerMs();

    /** Stops it (SIGTERM, then SIGKILL after a grace period). */
    @Override
    void close();
}
