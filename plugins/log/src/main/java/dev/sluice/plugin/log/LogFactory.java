package dev.sluice.plugin.log;

import dev.sluice.api.binding.BindingConfig;
import dev.sluice.api.binding.BindingContext;
import dev.sluice.api.binding.ProxyBinding;
import dev.sluice.api.binding.ProxyBindingFactory;
import dev.sluice.api.config.ConfigException;
import dev.sluice.support.config.Options;
import org.pf4j.Extension;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;

/**
 * Creates {@code log} proxy bindings: the request log, one JSON line per exchange of the gateway (docs/plugins/log.md).
 * Put it anywhere in a chain, with an {@code exit}: it passes every request on untouched and logs every
 * exchange of the gateway, those that never pass it and the refusals before any chain included.
 *
 * <pre>{@code
 * admin: { port: 9091 }
 * bindings:
 *   north_openai: { type: openai, kind: server, exit: log }
 *   log:    { type: log, kind: proxy, exit: router, options: { path: /var/log/sluice/requests.jsonl, rotate_every: 24h } }
 *   router: { type: router, kind: proxy, routes: [ ... ] }
 * }</pre>
 *
 * <p>Registers {@code GET admin_path} on the admin listener (also under {@code sluice check}, where it is inert, so a
 * clash of paths fails the check too). Outside check mode it opens the file — a file that cannot be opened is a startup
 * error naming {@code options.path} — registers a gateway-wide completion listener and a periodic drain on the
 * runtime's scheduler. Under check mode it opens nothing, registers no listener and schedules nothing.
 *
 * <p>Stateless, as every factory.
 */
@Extension
public final class LogFactory implements ProxyBindingFactory
{
    /** The binding type this factory creates. */
    public static final String TYPE = "log";

    /** @return {@value #TYPE} */
    @Override
    public String type()
    {
        return TYPE;
    }

    /**
     * Validates the options, opens the file (outside check mode) and creates the binding.
     *
     * @throws ConfigException naming the faulty path
     */
    @Override
    public ProxyBinding create(BindingConfig config, BindingContext context)
    {
        config.requireSingleExit("log passes every request to its exit", "the binding requests go to");
        LogOptions options = Options.bind(config.options(), LogOptions.class, config.optionsPath());
        Path path = null;
        if (!options.stdout())
        {
            try
            {
                path = Path.of(options.path());
            }
            catch (InvalidPathException e)
            {
                throw new ConfigException(config.optionsPath() + ".path", "value: \"" + options.path()
                    + "\" (expected: a file path; " + e.getReason() + ")");
            }
        }
        int maxBody = options.bodies() == null ? 0 : options.bodies().bodyBytes();
        LogWriter writer = context.checkOnly() ? null : new LogWriter(path, options.maxFileBytes(),
            options.rotateEvery() == null ? 0 : options.rotateEvery().toMillis(), options.keep(), maxBody);
        LogBinding binding = new LogBinding(config.name(), options, writer, context.checkOnly() ? null : context.executor());
        // The admin path first: if it clashes, the start fails before a file was opened.
        context.admin().add("GET", options.adminPath(), binding::stats);
        if (writer != null)
        {
            try
            {
                if (path != null && Files.isDirectory(path))
                    throw new IOException("it is a directory");
                writer.open(System.currentTimeMillis());
            }
            catch (IOException | SecurityException e)
            {
                throw new ConfigException(config.optionsPath() + ".path", "value: \"" + options.path()
                    + "\" (expected: a file the gateway can create or append to; " + e + ")");
            }
            binding.opened();
            context.onComplete(binding);
            binding.tickEvery(context.scheduler(), options.flushInterval());
        }
        return binding;
    }
}
