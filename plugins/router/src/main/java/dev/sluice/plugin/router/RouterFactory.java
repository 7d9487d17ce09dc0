package dev.sluice.plugin.router;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.databind.node.TextNode;
import dev.sluice.api.binding.BindingConfig;
import dev.sluice.api.binding.BindingContext;
import dev.sluice.api.binding.ProxyBinding;
import dev.sluice.api.binding.ProxyBindingFactory;
import dev.sluice.api.binding.BindingConfig.RouteConfig;
import dev.sluice.api.config.ConfigException;
import dev.sluice.api.exchange.Next;
import dev.sluice.support.config.ModelGlob;
import dev.sluice.support.config.Options;
import org.pf4j.Extension;

import dev.sluice.api.admin.AdminRoutes.AdminResponse;
import dev.sluice.api.binding.BindingConfig.RouteTarget;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
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
 *     - when: [ { model: "claude-*" } ]
 *       targets:                     # instead of exit: attempts with fallback (FailoverRoute)
 *         - { exit: anthropic_a, weight: 3 }
 *         - { exit: anthropic_b, weight: 1 }
 *         - { exit: south_openai, priority: 1, with: { model: "gpt-4o" } }
 *       retry: { attempts: 3 }
 * }</pre>
 *
 * <p>Each {@code when} entry is an object whose only key is {@code model} (see {@link ModelCondition}); {@code with}
 * may hold {@code model} (see {@link RouteRewrite}). A route with {@code targets} takes {@link TargetSettings} on
 * each target and {@link RouteSettings} beside them; the binding's {@code options} are {@link RouterOptions}. All are
 * checked strictly at startup: unknown keys and bad values are {@link dev.sluice.api.config.ConfigException}s naming
 * the exact path, e.g. {@code bindings.router.routes[1].when[0].modle: unknown key (expected one of: model)}.
 *
 * <p>Stateless, as every factory: all state lives in the binding it returns (retry budgets are per target binding
 * within one router binding).
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
        RouterOptions options = bindOptions(config);

        List<RouterBinding.Route> routes = new ArrayList<>(config.routes().size());
        Set<String> advertised = new LinkedHashSet<>();
        Map<String, RetryBudget> budgets = new HashMap<>();
        boolean anyFailover = false;
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
            if (!route.targets().isEmpty())
            {
                routes.add(new RouterBinding.Route(globs, failover(route, options, budgets, context)));
                anyFailover = true;
                continue;
            }
            if (route.settings().size() > 0)
            {
                String key = route.settings().fieldNames().next();
                throw new ConfigException(route.path() + "." + key, "unknown key (expected one of: when, exit, with; "
                    + "a route with targets also takes balance, retry, stream, eject, timeout, sticky)");
            }
            RouteRewrite with = Options.bind(route.with(), RouteRewrite.class, route.path() + ".with");
            Next exit = context.exit(route.exit());
            routes.add(new RouterBinding.Route(globs, with.model(), exit));
        }
        RouterBinding binding = new RouterBinding(routes, config.exit() != null, new ArrayList<>(advertised));
        if (anyFailover && !context.checkOnly())
        {
            context.admin().add("GET", options.adminPath(),
                request -> CompletableFuture.completedFuture(AdminResponse.json(200, binding.snapshot())));
            String name = config.name();
            context.admin().add("GET", options.adminPath() + "/metrics", request -> CompletableFuture.completedFuture(
                AdminResponse.text(200, "text/plain; version=0.0.4; charset=utf-8", binding.prometheus(name))));
        }
        return binding;
    }

    /** Compiles a route with targets: settings, targets sorted by priority (stable), their states. */
    private static FailoverRoute failover(RouteConfig route, RouterOptions options, Map<String, RetryBudget> budgets,
                                          BindingContext context)
    {
        if (route.with() != null)
            throw new ConfigException(route.path() + ".with", "unknown key (expected: with on each target of a route "
                + "with targets)");
        RouteSettings settings = Options.bind(retryOnAsText(route.settings()), RouteSettings.class, route.path());
        if (route.targets().size() > 64)
            throw new ConfigException(route.path() + ".targets", "value: " + route.targets().size()
                + " targets (expected: at most 64)");
        List<TargetState> states = new ArrayList<>();
        for (RouteTarget t : route.targets())
        {
            TargetSettings ts = Options.bind(t.settings(), TargetSettings.class, t.path());
            String alias = ts.with() == null ? null : ts.with().model();
            RetryBudget budget = budgets.computeIfAbsent(t.exit(),
                name -> new RetryBudget(options.retryBudget().ratio(), options.retryBudget().minPerSecond()));
            states.add(new TargetState(context.target(t.exit()), ts.weight(), ts.priority(), alias, budget,
                settings.eject()));
        }
        states.sort(Comparator.comparingInt(s -> s.priority));
        return new FailoverRoute(route.path(), states, settings, options.attemptHeaders(), context.scheduler());
    }

    /**
     * YAML reads the {@code 429} of {@code retry: { on: [ connect, 429 ] }} as a number, which names the failure as
     * {@code "429"} does: integers there are taken as their text. Everything else is left to the strict binding.
     */
    private static JsonNode retryOnAsText(JsonNode settings)
    {
        JsonNode on = settings.path("retry").path("on");
        boolean numbers = false;
        for (JsonNode value : on)
            numbers |= value.isIntegralNumber();
        if (!numbers)
            return settings;
        ObjectNode copy = settings.deepCopy();
        ArrayNode list = (ArrayNode)copy.get("retry").get("on");
        for (int i = 0; i < list.size(); i++)
        {
            if (list.get(i).isIntegralNumber())
                list.set(i, TextNode.valueOf(list.get(i).asText()));
        }
        return copy;
    }

    private static RouterOptions bindOptions(BindingConfig config)
    {
        return Options.bind(config.options(), RouterOptions.class, config.optionsPath());
    }
}
