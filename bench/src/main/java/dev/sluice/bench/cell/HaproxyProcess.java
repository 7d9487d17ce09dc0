package dev.sluice.bench.cell;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * The harness' own HAProxy ({@code haproxy -db -f <generated cfg>}: in the foreground, a child of the bench), loopback
 * only, never the system's service. See {@link HaproxyConf}.
 */
final class HaproxyProcess
{
    private HaproxyProcess()
    {
    }

    /**
     * @param binary the haproxy executable
     * @param dir its own directory (created): the config and its output
     * @param port the port
     * @param mockPort the mock's port
     * @param h2cUpstream whether to speak h2c to the mock
     * @param pinning where it runs
     * @return the started instance, proxying to the mock
     * @throws IOException if it did not answer within 15 s
     */
    static BytePipeProcess start(String binary, Path dir, int port, int mockPort, boolean h2cUpstream, Pinning pinning)
        throws IOException
    {
        Files.createDirectories(dir);
        Path cfg = dir.resolve("haproxy.cfg");
        Files.writeString(cfg, HaproxyConf.render(port, mockPort, h2cUpstream), StandardCharsets.UTF_8);
        List<String> command = pinning.target(List.of(binary, "-db", "-f", cfg.toAbsolutePath().toString()));
        return BytePipeProcess.start("haproxy", command, dir.resolve("stdout.log"), port, () -> "");
    }
}
