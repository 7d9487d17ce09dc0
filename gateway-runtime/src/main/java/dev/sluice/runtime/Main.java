package dev.sluice.runtime;

import dev.sluice.api.config.ConfigException;

import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.util.Base64;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.CountDownLatch;

/**
 * The command line: {@code sluice run --config FILE [--plugins DIR] [--port N] [--admin-port N]},
 * {@code sluice check --config FILE [--plugins DIR]}, and the virtual-key helpers {@code sluice keys new} (a fresh key
 * and its config line) and {@code sluice keys hash} (the SHA-256 of a key read from stdin). Exit codes: 0 ok, 2 config
 * error, 1 anything else.
 */
public final class Main
{
    private Main()
    {
    }

    /** Entry point. */
    public static void main(String[] args)
    {
        System.exit(run(args));
    }

    static int run(String[] args)
    {
        if (args.length > 0 && args[0].equals("keys"))
            return keys(args, System.in, System.out, System.err);
        if (args.length == 0 || !(args[0].equals("run") || args[0].equals("check")))
        {
            System.err.println(usage());
            return args.length > 0 && (args[0].equals("--help") || args[0].equals("-h")) ? 0 : 1;
        }
        String command = args[0];
        Path config = null;
        Path plugins = defaultPlugins();
        Integer port = null;
        Integer adminPort = null;
        for (int i = 1; i < args.length; i++)
        {
            String a = args[i];
            if (i + 1 >= args.length)
            {
                System.err.println("sluice: " + a + " needs a value\n" + usage());
                return 1;
            }
            switch (a)
            {
                case "--config" -> config = Path.of(args[++i]);
                case "--plugins" -> plugins = Path.of(args[++i]);
                case "--port", "--admin-port" ->
                {
                    try
                    {
                        int value = Integer.parseInt(args[++i]);
                        if (a.equals("--port"))
                            port = value;
                        else
                            adminPort = value;
                    }
                    catch (NumberFormatException e)
                    {
                        System.err.println("sluice: " + a + ": value: " + args[i] + " (expected: a port number)");
                        return 1;
                    }
                }
                default ->
                {
                    System.err.println("sluice: unknown option " + a + "\n" + usage());
                    return 1;
                }
            }
        }
        if (config == null)
        {
            System.err.println("sluice: --config is required\n" + usage());
            return 1;
        }
        Sluice.Options options = Sluice.options(config, plugins);
        if (port != null)
            options.port(port);
        if (adminPort != null)
            options.adminPort(adminPort);
        try
        {
            if (command.equals("check"))
            {
                List<String> names = Sluice.check(options);
                System.out.println("sluice: " + config + " is valid (" + names.size() + " bindings: " + String.join(", ", names) + ")");
                return 0;
            }
            Sluice gateway = Sluice.start(options);
            CountDownLatch stopped = new CountDownLatch(1);
            Runtime.getRuntime().addShutdownHook(new Thread(() ->
            {
                try
                {
                    gateway.close();
                }
                catch (Exception e)
                {
                    e.printStackTrace();
                }
                finally
                {
                    stopped.countDown();
                }
            }, "sluice-shutdown"));
            System.out.println("sluice: listening on port " + gateway.port());
            // The main thread has nothing else to do; the JVM exits via the shutdown hook.
            stopped.await();
            return 0;
        }
        catch (ConfigException e)
        {
            System.err.println("sluice: config error: " + e.getMessage());
            return 2;
        }
        catch (Exception e)
        {
            System.err.println("sluice: failed to start: " + e);
            return 1;
        }
    }

    /** The prefix of every key {@code sluice keys new} makes, so that a leaked one is recognisable (secret scanners). */
    static final String KEY_PREFIX = "sk-sluice-";

    /**
     * {@code sluice keys new}: prints a fresh key on the first line ({@value #KEY_PREFIX} and 32 bytes from
     * {@link SecureRandom}, base64url without padding), then the config line to paste under a keys binding's
     * {@code keys}. {@code sluice keys hash}: reads one key from {@code in} (its first line, surrounding whitespace
     * removed) and prints the lower-case hex SHA-256 of its UTF-8 bytes.
     */
    static int keys(String[] args, InputStream in, PrintStream out, PrintStream err)
    {
        String sub = args.length == 2 ? args[1] : "";
        switch (sub)
        {
            case "new" ->
            {
                byte[] random = new byte[32];
                new SecureRandom().nextBytes(random);
                String key = KEY_PREFIX + Base64.getUrlEncoder().withoutPadding().encodeToString(random);
                out.println(key);
                out.println("# Give the key above to its user: it is shown once and stored nowhere. Under the keys binding's"
                    + " options.keys (or in its keys file), add:");
                out.println("- { id: CHANGE-ME, sha256: \"" + sha256Hex(key) + "\" }");
                return 0;
            }
            case "hash" ->
            {
                String key;
                try
                {
                    String text = new String(in.readNBytes(64 * 1024), StandardCharsets.UTF_8);
                    int eol = text.indexOf('\n');
                    key = (eol < 0 ? text : text.substring(0, eol)).strip();
                }
                catch (IOException e)
                {
                    err.println("sluice keys hash: cannot read stdin: " + e.getMessage());
                    return 1;
                }
                if (key.isEmpty())
                {
                    err.println("sluice keys hash: no key on stdin (expected: the key on one line, e.g. printf %s \"$KEY\" |"
                        + " sluice keys hash)");
                    return 1;
                }
                out.println(sha256Hex(key));
                return 0;
            }
            default ->
            {
                err.println(usage());
                return 1;
            }
        }
    }

    private static String sha256Hex(String key)
    {
        try
        {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(key.getBytes(StandardCharsets.UTF_8)));
        }
        catch (NoSuchAlgorithmException e)
        {
            throw new IllegalStateException("every Java runtime has SHA-256", e);
        }
    }

    private static Path defaultPlugins()
    {
        String home = System.getProperty("sluice.home");
        return home == null ? Path.of("plugins") : Path.of(home, "plugins");
    }

    private static String usage()
    {
        return """
            usage: sluice run   --config FILE [--plugins DIR] [--port N] [--admin-port N]
                   sluice check --config FILE [--plugins DIR]
                   sluice keys new                       # a fresh virtual key and its config line
                   sluice keys hash < KEY                # the SHA-256 of a key read from stdin""";
    }
}
