package dev.sluice.bench.cell;

import java.nio.file.Path;

/**
 * What the runner needs from its surroundings, resolved once per bench session.
 *
 * @param options     the command line
 * @param dir         the session directory ({@code report.md}, {@code report.json}, {@code raw/})
 * @param java        the java executable for the mock
 * @param classpath   the bench classpath for the mock
 * @param nginxBinary the nginx executable, or null when the byte pipe is unavailable or off
 * @param stages      whether generated gateway configs enable the per-stage table
 * @param haproxyBinary the haproxy executable, or null when that reference is unavailable or off
 * @param pinning     where the processes run
 * @param nginxMockBinary the nginx executable for the static mock, or null when {@code --mock java} or nginx is missing
 */
record Session(BenchOptions options, Path dir, String java, String classpath, String nginxBinary, boolean stages,
               String haproxyBinary, Pinning pinning, String nginxMockBinary)
{
    /** @return where raw histograms, GC logs, process logs and generated configs go */
    Path raw()
    {
        return dir.resolve("raw");
    }
}
