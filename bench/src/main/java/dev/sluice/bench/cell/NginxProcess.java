package dev.sluice.bench.cell;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * The harness' own nginx instances ({@code nginx -p DIR -c DIR/nginx.conf -g 'daemon off;'}), loopback only, never
 * the system's service: the byte pipe ({@link NginxConf}) and the static mock ({@link NginxMockConf}).
 */
final class NginxProcess
{
    private NginxProcess()
    {
    }

    /**
     * Starts the byte pipe.
     *
     * @param binary the nginx executable
     * @param prefix its own directory (created)
     * @param port the port
     * @param mockPort the mock's port (HTTP/1.1)
     * @param workers {@code worker_processes}
     * @param pinning where it runs (the workers inherit the master's affinity)
     * @return the started instance, proxying to the mock
     * @throws IOException if it did not answer within 15 s
     */
    static BytePipeProcess start(String binary, Path prefix, int port, int mockPort, String workers, Pinning pinning)
        throws IOException
    {
        List<String> command = command(binary, prefix, NginxConf.render(prefix, port, mockPort, workers, user()));
        return BytePipeProcess.start("nginx", pinning.target(command), prefix.resolve("logs/stdout.log"), port,
            () -> errorLog(prefix));
    }

    /**
     * Writes {@code conf} into {@code prefix} (with the log and temp directories it refers to).
     *
     * @param binary the nginx executable
     * @param prefix the instance's own directory (created)
     * @param conf the config text
     * @return the command line that runs that instance in the foreground
     * @throws IOException if the files cannot be written
     */
    static List<String> command(String binary, Path prefix, String conf) throws IOException
    {
        Files.createDirectories(prefix.resolve("logs"));
        Files.createDirectories(prefix.resolve("tmp"));
        Path file = prefix.resolve("nginx.conf");
        Files.writeString(file, conf, StandardCharsets.UTF_8);
        return List.of(binary, "-p", prefix.toAbsolutePath() + "/", "-c", file.toAbsolutePath().toString(), "-g",
            "daemon off;");
    }

    /** @return the user workers must run as, or null: a root master's workers would switch to nginx's default user,
     * which cannot write the temp dirs */
    static String user()
    {
        return "root".equals(System.getProperty("user.name")) ? "root" : null;
    }

    /**
     * @param prefix the instance's directory
     * @return its error log, for a message saying why it did not start, or an empty string
     */
    static String errorLog(Path prefix)
    {
        try
        {
            return Files.readString(prefix.resolve("logs/error.log"));
        }
        catch (IOException x)
        {
            // No error log: the process' output says enough.
            return "";
        }
    }
}
