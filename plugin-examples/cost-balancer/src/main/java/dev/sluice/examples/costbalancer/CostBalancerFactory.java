package dev.sluice.examples.costbalancer;

import dev.sluice.api.binding.BindingConfig;
import dev.sluice.api.binding.BindingContext;
import dev.sluice.api.binding.ProxyBinding;
import dev.sluice.api.binding.ProxyBindingFactory;
import dev.sluice.api.binding.BindingConfig.RouteConfig;
import dev.sluice.api.binding.BindingConfig.RouteTarget;
import dev.sluice.api.binding.BindingContext.Target;
import dev.sluice.api.config.ConfigException;
import dev.sluice.support.config.ModelGlob;
import dev.sluice.support.config.Options;
import org.pf4j.Extension;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * Creates {@code cost-balancer} proxy bindings, which send each request to the cheapest target of its route that has
 * room, and once to the next cheapest when that one fails (see {@link CostBalancerBinding}):
 *
 * <pre>{@code
 * cheap_first:
 *   type: cost-balancer
 *   kind: proxy
 *   options: { max_inflight: 64 }
 *   routes:
 *     - when: [ { model: "*" } ]
 *       targets:
 *         - { exit: south_mini, cost: 0.15 }
 *         - { exit: south_big, cost: 2.50 }
 * }</pre>
 *
 * <p>The runtime reads each route's {@code when}, {@code exit}, {@code with} and {@code targets}, checks that every
 * target's {@code exit} names a binding, and hands the rest over raw: the conditions, each target's other keys
 * ({@link RouteTarget#settings()}, here {@code cost}) and the route's other keys ({@link RouteConfig#settings()}).
 * Validating those strictly is this factory's job, so a typo such as {@code coast: 0.15} stops the startup with
 * {@code bindings.cheap_first.routes[0].targets[0].coast: unknown key (expected one of: cost)}.
 *
 * <p>{@link BindingContext#target(String)} turns each exit into a {@link Target}: resolved once, here, and shared with
 * every other binding that sends to the same exit, so its in-flight count is the upstream's, not this binding's.
 */
@Extension
public final class CostBalancerFactory implements ProxyBindingFactory
{
    /** The binding type, as written after {@code type:} in the config. */
    public static final String TYPE = "cost-balancer";

    private static final String TARGETS = "targets, a list of { exit: BINDING, cost: NUMBER }";

    /** @return {@value #TYPE} */
    @Override
    public String type()
    {
        return TYPE;
    }

    /**
     * Validates the options and routes strictly, then resolves the targets.
     *
     * @throws ConfigException naming the faulty path
     */
    @Override
    public ProxyBinding create(BindingConfig config, BindingContext context)
    {
        if (config.exit() != null)
            throw new ConfigException(config.path() + ".exit", "value: \"" + config.exit()
                + "\" (expected: none; cost-balancer sends requests to its routes' targets)");
        if (config.routes().isEmpty())
            throw new ConfigException(config.path() + ".routes", "must be set (expected: routes with " + TARGETS + ")");
        CostBalancerOptions options = Options.bind(config.options(), CostBalancerOptions.class, config.optionsPath());
        List<CostBalancerBinding.Route> routes = new ArrayList<>();
        for (RouteConfig route : config.routes())
            routes.add(route(route, context));
        return new CostBalancerBinding(routes, options.maxInflight());
    }

    private static CostBalancerBinding.Route route(RouteConfig route, BindingContext context)
    {
        if (route.exit() != null)
            throw new ConfigException(route.path() + ".exit", "value: \"" + route.exit() + "\" (expected: " + TARGETS + ")");
        if (route.with() != null || !route.settings().isEmpty())
        {
            String key = route.with() != null ? "with" : route.settings().fieldNames().next();
            throw new ConfigException(route.path() + "." + key, "unknown key (expected one of: when, targets)");
        }
        ModelGlob[] when = new ModelGlob[route.when().size()];
        for (int i = 0; i < when.length; i++)
        {
            String path = route.path() + ".when[" + i + "]";
            when[i] = ModelGlob.compile(Options.bind(route.when().get(i), CostBalancerOptions.Condition.class, path).model());
        }
        List<Priced> priced = new ArrayList<>();
        Set<String> exits = new HashSet<>();
        for (RouteTarget target : route.targets())
        {
            CostBalancerOptions.TargetOptions settings = Options.bind(target.settings(),
                CostBalancerOptions.TargetOptions.class, target.path());
            if (!exits.add(target.exit()))
                throw new ConfigException(target.path() + ".exit", "value: \"" + target.exit()
                    + "\" (expected: each binding once per route)");
            priced.add(new Priced(target.exit(), settings.cost()));
        }
        // Cheapest first; the sort is stable, so targets of equal cost keep their config order.
        priced.sort(Comparator.comparingDouble(Priced::cost));
        Target[] targets = priced.stream().map(p -> context.target(p.exit())).toArray(Target[]::new);
        return new CostBalancerBinding.Route(when, targets);
    }

    private record Priced(String exit, double cost)
    {
    }
}
