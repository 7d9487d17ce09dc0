package dev.sluice.examples.denywords;

import dev.sluice.api.binding.BindingConfig;
import dev.sluice.api.binding.BindingContext;
import dev.sluice.api.binding.ProxyBinding;
import dev.sluice.api.binding.ProxyBindingFactory;
import dev.sluice.api.config.ConfigException;
import dev.sluice.api.exchange.ResponseHeaders;
import dev.sluice.support.config.Options;
import org.pf4j.Extension;

import java.util.TreeSet;

/**
 * Creates {@code deny-words} proxy bindings: a guardrail that rejects requests containing configured words.
 * Put it in the chain between a server binding and the router:
 *
 * <pre>{@code
 * bindings:
 *   north_openai: { type: openai, kind: server, exit: deny }
 *   deny:   { type: deny-words, kind: proxy, options: { words: [ forbidden ] }, exit: router }
 *   router: { type: router, kind: proxy, routes: [ ... ] }
 * }</pre>
 *
 * <p>This class is the plugin's entry point. PF4J finds it through the {@link Extension} annotation: the annotation
 * processor writes its name to {@code META-INF/extensions.idx} at compile time, and the runtime indexes every
 * {@link ProxyBindingFactory} by {@link #type()} once at startup. A factory is stateless: it validates the config
 * and returns a new binding, which holds the state.
 *
 * <p>Options ({@link DenyWordsOptions}): {@code words}, required, a list of non-blank words or phrases;
 * {@code ignore_case}, optional, default {@code true}; {@code headers}, optional, response headers added to every
 * answer and refusal. The binding takes an {@code exit} (where allowed requests
 * go) and no {@code routes}. Every mistake is a {@link ConfigException} naming its path, e.g.
 * {@code bindings.deny.options.words[1]: value: " " (expected: a non-blank word or phrase)}.
 *
 * <p>See {@link DenyWordsBinding} for what is scanned and how words match.
 */
@Extension
public final class DenyWordsFactory implements ProxyBindingFactory
{
    /** The binding type, as written after {@code type:} in the config; kebab-case, unique among proxy bindings. */
    public static final String TYPE = "deny-words";

    /** @return {@value #TYPE} */
    @Override
    public String type()
    {
        return TYPE;
    }

    /**
     * Validates the binding's config strictly and creates the binding.
     *
     * @throws ConfigException naming the faulty path
     */
    @Override
    public ProxyBinding create(BindingConfig config, BindingContext context)
    {
        if (!config.routes().isEmpty())
            throw new ConfigException(config.path() + ".routes", "value: " + config.routes().size()
                + " routes (expected: none; deny-words passes allowed requests to its exit)");
        if (config.exit() == null)
            throw new ConfigException(config.path() + ".exit", "must be set (expected: the binding that allowed requests go to)");

        DenyWordsOptions options = Options.bind(config.options(), DenyWordsOptions.class, config.optionsPath());
        // Checked here rather than in the record so that a misspelt key is reported as such, not as a missing list:
        // the binder reports unknown keys only after the record's constructor has run.
        if (options.words() == null)
            throw new ConfigException(config.optionsPath() + ".words", "must be set (expected: a list of words to block)");
        ResponseHeaders headers = ResponseHeaders.EMPTY;
        // Sorted, so the order on the wire does not depend on the map's.
        for (String name : new TreeSet<>(options.headers().keySet()))
        {
            try
            {
                headers = headers.with(name, options.headers().get(name));
            }
            catch (IllegalArgumentException e)
            {
                // ResponseHeaders refuses the names the runtime owns: a startup error here, not a failed request.
                throw new ConfigException(config.optionsPath() + ".headers." + name, e.getMessage());
            }
        }
        return new DenyWordsBinding(options, headers);
    }
}
