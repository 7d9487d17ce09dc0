package dev.sluice.runtime;

import dev.sluice.api.config.ConfigException;

import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CountDownLatch;

/**
 * The command line: {@code sluice run --config FILE [--plugins DIR] [--port N]} and
 * {@code sluice check --config FILE [--plugins DIR]}. Exit codes: 0 ok, 2 config error, 1 anything else.
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
        if (args.length == 0 || !(args[0].equals("run") || args[0].equals("check")))
        {
            System.err.println(usage());
            return args.length > 0 && (args[0].equals("--help") || args[0].equals("-h")) ? 0 : 1;
        }
        String command = args[0];
        Path config = null;
        Path plugins = defaultPlugins();
        Integer port = null;
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
                case "--port" ->
                {
                    try
                    {
                        port = Integer.parseInt(args[++i]);
                    }
                    catch (NumberFormatException e)
                    {
                        System.err.println("sluice: --port: value: " + args[i] + " (expected: a port number)");
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

    private static Path defaultPlugins()
    {
        String home = System.getProperty("sluice.home");
        return home == null ? Path.of("plugins") : Path.of(home, "plugins");
    }

    private static String usage()
    {
        return """
            usage: sluice run   --config FILE [--plugins DIR] [--port N]
                   sluice check --config FILE [--plugins DIR]""";
    }
}
