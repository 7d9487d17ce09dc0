package dev.sluice.examples.exchangetap;

import dev.sluice.api.binding.BindingConfig;
import dev.sluice.api.binding.BindingContext;
import dev.sluice.api.binding.ProxyBinding;
import dev.sluice.api.binding.ProxyBindingFactory;
import dev.sluice.api.config.ConfigException;
import dev.sluice.api.exchange.ResponseHeaders;
import dev.sluice.support.config.Options;
import org.pf4j.Extension;

import java.nio.file.InvalidPathException;
import java.nio.file.Path;

/**
 * Creates {@code exchange-tap} proxy bindings: the newest completed exchanges of the gateway, served as JSON on the
 * admin listener. Put it anywhere in the chain (it sees every exchange of the gateway either way; where it sits decides
 * which exchanges pass through it and get its {@code x-tap} header):
 *
 * <pre>{@code
 * admin: { port: 9091 }
 * bindings:
 *   north_openai: { type: openai, kind: server, exit: tap }
 *   tap:    { type: exchange-tap, kind: proxy, options: { capacity: 512, summary_every: 1m }, exit: router }
 *   router: { type: router, kind: proxy, routes: [ ... ] }
 * }</pre>
 *
 * <p>What it registers with the runtime, in {@link #create}: the admin endpoint {@code GET admin_path} (always: in
 * check mode the registration is inert, and a path two bindings both claim is then reported by {@code sluice check}
 * too); a gateway-wide completion listener and, with {@code summary_every}, a periodic task on the runtime's scheduler
 * (both only outside check mode). Options: see {@link ExchangeTapOptions}. Every mistake is a {@link ConfigException}
 * naming its path.
 */
@Extension
public final class ExchangeTapFactory implements ProxyBindingFactory
{
    /** The binding type, as written after {@code type:} in the config. */
    public static final String TYPE = "exchange-tap";

    /** @return {@value #TYPE} */
    @Override
    public String type()
    {
        return TYPE;
    }

    /**
     * Validates the binding's config strictly, creates the binding and registers it with the runtime's services.
     *
     * @throws ConfigException naming the faulty path
     */
    @Override
    public ProxyBinding create(BindingConfig config, BindingContext context)
    {
        if (!config.routes().isEmpty())
            throw new ConfigException(config.path() + ".routes", "value: " + config.routes().size()
                + " routes (expected: none; exchange-tap passes every request to its exit)");
        if (config.exit() == null)
            throw new ConfigException(config.path() + ".exit", "must be set (expected: the binding requests go to)");
        ExchangeTapOptions options = Options.bind(config.options(), ExchangeTapOptions.class, config.optionsPath());
        ResponseHeaders tapHeaders = null;
        if (options.tapHeader() != null)
        {
            try
            {
                tapHeaders = ResponseHeaders.of("x-tap", options.tapHeader());
            }
            catch (IllegalArgumentException e)
            {
                // A value with CR or LF: a startup error here, never a failed request.
                throw new ConfigException(config.optionsPath() + ".tap_header", e.getMessage());
            }
        }
        Path closeFile = null;
        if (options.closeFile() != null)
        {
            try
            {
                closeFile = Path.of(options.closeFile());
            }
            catch (InvalidPathException e)
            {
                throw new ConfigException(config.optionsPath() + ".close_file", "value: \"" + options.closeFile()
                    + "\" (expected: a file path; " + e.getReason() + ")");
            }
        }
        boolean checkOnly = context.checkOnly();
        ExchangeTapBinding binding = new ExchangeTapBinding(config.name(), options, tapHeaders, closeFile, checkOnly);
        context.admin().add("GET", options.adminPath(), binding::recent);
        if (!checkOnly)
        {
            context.onComplete(binding);
            if (options.summaryEvery() != null)
                binding.summarizeEvery(context.scheduler(), options.summaryEvery());
        }
        return binding;
    }
}
