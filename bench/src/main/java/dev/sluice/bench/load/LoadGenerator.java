package dev.sluice.bench.load;

/**
 * Runs a {@link LoadSpec} against its target and returns what it measured. Implementations are blocking (this is
 * the benchmark driver, not the gateway) and must stop by themselves: after warm-up plus window plus the timeout
 * at the latest, every request still outstanding is aborted and counted as a timeout.
 */
public interface LoadGenerator
{
    /** Runs {@code spec}; blocks until done. */
    LoadResult run(LoadSpec spec) throws Exception;
}
