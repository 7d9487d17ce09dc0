package dev.sluice.plugin.router;

import dev.sluice.api.config.ModelGlob;
import com.fasterxml.jackson.databind.JsonNode;
import dev.sluice.api.binding.BindingConfig;
import dev.sluice.api.binding.BindingContext;
import dev.sluice.api.binding.ProxyBinding;
import dev.sluice.api.binding.ProxyBindingFactory;
import dev.sluice.api.binding.RouteConfig;
import dev.sluice.api.config.ConfigException;
import dev.sluice.api.config.Options;
import dev.sluice.api.exchange.Next;
import org.pf4j.Extension;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * Creates {@code router} proxy bindings, which pick an exit by model glob and may alias the model:
 *
 * <pre>{@code
 * router:
 *   type: router
 *   kind: proxy
 *   exit: south_default            # optional fallback; without it an unrouted model is a 404
 *   routes:
 *     - when: [ { model: "gpt-*" }, { model: "o?-*" } ]
 *       exit: south_openai
 *     - when: [ { model: "fast" } ]
 *       exit: south_openai
 *       with: { model: "gpt-4o-mini" }
 * }</pre>
 *
 * <p>The router takes no {@code options}. Each {@code when} entry is an object whose only key is {@code model}
 * (see {@link ModelCondition}); {@code with} may hold {@code model} (see {@link RouteRewrite}). Both are checked
 * strictly at startup: unknown keys and blank values are {@link dev.sluice.api.config.ConfigException}s naming the
 * exact path, e.g. {@code bindings.router.routes[1].when[0].modle: unknown key (expected one of: model)}.
 *
 * <p>Stateless, as every factory: all state lives in the binding it returns.
 */
@Extension
public final class RouterFactory implements ProxyBindingFactory
{
    /** The binding type this factory creates. */
    public static final String TYPE = "router";

    /** @return {@value #TYPE} */
    @Override
    public String type()
    {
        return TYPE;
    }

    /**
     * Validates the routes, compiles their globs and resolves their exits.
     *
     * @throws dev.sluice.api.config.ConfigException naming the faulty path
     */
    @Override
    public ProxyBinding create(BindingConfig config, BindingContext context)
    {
        bindOptions(config);

        List<RouterBinding.Route> routes = new ArrayList<>(config.routes().size());
        Set<String> advertised = new LinkedHashSet<>();
        for (RouteConfig route : config.routes())
        {
            List<ModelGlob> globs = new ArrayList<>(route.when().size());
            for (int i = 0; i < route.when().size(); i++)
            {
                JsonNode when = route.when().get(i);
                String whenPath = route.path() + ".when[" + i + "]";
                ModelCondition condition = Options.bind(when, ModelCondition.class, whenPath);
                if (condition.model() == null)
                    throw new ConfigException(whenPath + ".model", "must be set " + ModelCondition.EXPECTED);
                ModelGlob glob = ModelGlob.compile(condition.model());
                globs.add(glob);
                if (glob.isLiteral())
                    advertised.add(glob.glob());
            }
            RouteRewrite with = Options.bind(route.with(), RouteRewrite.class, route.path() + ".with");
            Next exit = context.exit(route.exit());
            routes.add(new RouterBinding.Route(globs, with.model(), exit));
        }
        return new RouterBinding(routes, config.exit() != null, new ArrayList<>(advertised));
    }

    private static void bindOptions(BindingConfig config)
    {
        try
        {
            // Nothing is accepted under options: binding the empty record turns any key there into an error with its path.
            Options.bind(config.options(), RouterOptions.class, config.optionsPath());
        }
        catch (ConfigException e)
        {
            // The binder lists the known keys, which is an empty list here: say where the router's settings go instead.
            if (e.problem() != null && e.problem().startsWith("unknown key"))
                throw new ConfigException(e.path(), "unknown key (expected: no options; the router takes routes and an exit)");
            throw e;
        }
    }
}
