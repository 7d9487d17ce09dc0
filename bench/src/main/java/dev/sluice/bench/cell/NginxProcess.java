package dev.sluice.bench.cell;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * The harness' own nginx instance ({@code nginx -p DIR -c DIR/nginx.conf -g 'daemon off;'}), loopback only, never
 * the system's service. See {@link NginxConf}.
 */
final class NginxProcess
{
    private NginxProcess()
    {
    }

    /**
     * @param binary the nginx executable
     * @param prefix its own directory (created)
     * @param port the port
     * @param mockPort the mock's port
     * @param workers {@code worker_processes}
     * @param pinning where it runs (the workers inherit the master's affinity)
     * @return the started instance, proxying to the mock
     * @throws IOException if it did not answer within 15 s
     */
    static BytePipeProcess start(String binary, Path prefix, int port, int mockPort, String workers, Pinning pinning)
        throws IOException
    {
        Files.createDirectories(prefix.resolve("logs"));
        Files.createDirectories(prefix.resolve("tmp"));
        // Workers of a root master would switch to nginx's default user, which cannot write the temp dirs.
        String user = "root".equals(System.getProperty("user.name")) ? "root" : null;
        Path conf = prefix.resolve("nginx.conf");
        Files.writeString(conf, NginxConf.render(prefix, port, mockPort, workers, user), StandardCharsets.UTF_8);
        List<String> command = pinning.target(List.of(binary, "-p", prefix.toAbsolutePath() + "/", "-c",
            conf.toAbsolutePath().toString(), "-g", "daemon off;"));
        return BytePipeProcess.start("nginx", command, prefix.resolve("logs/stdout.log"), port, () ->
        {
            try
            {
                return Files.readString(prefix.resolve("logs/error.log"));
            }
            catch (IOException x)
            {
                // No error log: the tail says enough.
                return "";
            }
        });
    }
}
