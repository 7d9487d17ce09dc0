package dev.sluice.plugin.router;

import dev.sluice.api.ErrorKind;
import dev.sluice.api.GatewayException;
import dev.sluice.api.binding.ProxyBinding;
import dev.sluice.api.binding.ServerBinding.Operation;
import dev.sluice.api.codec.DialectCodec;
import dev.sluice.api.exchange.Exchange.Identity;
import dev.sluice.api.exchange.Exchange;
import dev.sluice.api.exchange.Next;
import dev.sluice.api.exchange.Reply;
import dev.sluice.support.config.ModelGlob;
import dev.sluice.support.json.Json;
import dev.sluice.support.json.JsonStrings;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * Picks the exit of an exchange by its model; a route with {@code targets} hands it to its {@link FailoverRoute}.
 * Routes are tried in config order and the first whose {@code when} list matches wins; a route with an empty
 * {@code when} matches every model. A route with {@code with.model} sets the exchange's
 * {@linkplain Exchange#targetModel(String) target model} (an alias) before taking its exit.
 * When no route matches, the binding's own {@code exit} is the fallback; without one the exchange fails with
 * {@link ErrorKind#NOT_FOUND} and no upstream is called.
 *
 * <p>Matching uses {@link Exchange#targetModel()}, which is the client's model unless an earlier stage aliased it,
 * so routers can be chained. It never decodes the request body and allocates nothing on a match: the routes are
 * an array of precompiled globs and resolved exits.
 *
 * <p>Thread-safe: immutable after creation.
 */
final class RouterBinding implements ProxyBinding
{
    // A model name is client input echoed in the 404 message: cap it so a huge one cannot bloat the error.
    private static final int MAX_ECHOED_MODEL = 200;

    private final Route[] routes;
    private final boolean hasFallback;
    private final List<String> advertisedModels;
    private static final String JSON = "application/json";

    /**
     * @param routes           the compiled routes, in config order
     * @param hasFallback      whether the binding has an {@code exit} to take when no route matches
     * @param advertisedModels the literal model names the routes serve
     */
    RouterBinding(List<Route> routes, boolean hasFallback, List<String> advertisedModels)
    {
        this.routes = routes.toArray(new Route[0]);
        this.hasFallback = hasFallback;
        this.advertisedModels = List.copyOf(advertisedModels);
    }

    /**
     * The exchange attribute set to {@code "budget"} when a retry was not made because the failed target's retry
     * budget was spent, for request logs and metrics.
     */
    static final String RETRY_REFUSED = "router.retry_refused";

    /**
     * The exchange attribute set to a target's binding name when one of the exchange's attempts ejected it (its
     * failure was the last its outlier detection allowed), for request logs and metrics.
     */
    static final String EJECTED = "router.ejected";

    @Override
    public CompletionStage<Reply> handle(Exchange exchange, Next next)
    {
        Operation operation = exchange.operation();
        if (operation == Operation.LIST_MODELS || operation == Operation.GET_MODEL)
            return listing(exchange, operation);
        String model = exchange.targetModel();
        for (Route route : routes)
        {
            if (route.matches(model))
            {
                if (route.failover != null)
                    return route.failover.handle(exchange);
                if (route.alias != null)
                    exchange.targetModel(route.alias);
                return route.exit.handle(exchange);
            }
        }
        if (hasFallback)
            return next.handle(exchange);
        return CompletableFuture.failedFuture(notFound(exchange.model()));
    }

    /**
     * {@inheritDoc}
     *
     * <p>The router lists the literal model names of its {@code when} conditions, in route order, without
     * duplicates. Globs such as {@code gpt-*} are not listed: they describe a family, not a model a client can
     * name, and the router cannot know which members the upstream serves. Alias targets ({@code with.model}) are
     * not listed either: clients ask for the alias, not for what it points at.
     */
    @Override
    public List<String> advertisedModels()
    {
        return advertisedModels;
    }

    /** @return what {@code GET /routes} shows: every route with targets, its targets and their state now */
    String snapshot()
    {
        long now = System.nanoTime();
        ObjectNode root = Json.MAPPER.createObjectNode();
        ArrayNode list = root.putArray("routes");
        for (Route route : routes)
        {
            if (route.failover == null)
                continue;
            ObjectNode r = list.addObject();
            r.put("route", route.failover.path);
            ArrayNode targets = r.putArray("targets");
            for (TargetState t : route.failover.targets())
            {
                ObjectNode o = targets.addObject();
                o.put("exit", t.name());
                if (t.alias != null)
                    o.put("model", t.alias);
                o.put("priority", t.priority);
                o.put("weight", t.weight);
                o.put("in_flight", t.target.inFlight());
                o.put("latency_ewma_ms", Math.round(t.ewmaNanos() / 1e4) / 100.0);
                TargetState.Health health = t.health(now);
                o.put("state", health.name().toLowerCase(java.util.Locale.ROOT));
                long until = t.availableAt();
                if (health != TargetState.Health.HEALTHY && until - now > 0)
                    o.put("available_in_ms", (until - now) / 1_000_000);
                o.put("consecutive_failures", t.consecutiveFailures());
                o.put("ejections", t.ejections());
                o.put("retries_refused", t.budget.refused());
            }
        }
        return root.toString();
    }

    /**
     * @param binding the router binding's name, a label value
     * @return what {@code GET /routes/metrics} shows: the routes' targets in the Prometheus text format — a gauge of
     *         each target's state (1 for the state it is in, 0 for the others) and counters of its ejections and of the
     *         retries its budget refused. Labels: {@code router}, {@code route} (the route's index), {@code target}
     *         (its binding), {@code state}: all from the config, so the series are bounded
     */
    String prometheus(String binding)
    {
        long now = System.nanoTime();
        StringBuilder state = new StringBuilder("# HELP sluice_route_target_state Each target's state: 1 for the one it "
            + "is in\n# TYPE sluice_route_target_state gauge\n");
        StringBuilder ejections = new StringBuilder("# HELP sluice_route_target_ejections_total Ejections of the target by "
            + "its route's outlier detection\n# TYPE sluice_route_target_ejections_total counter\n");
        StringBuilder refused = new StringBuilder("# HELP sluice_route_target_retries_refused_total Retries not made for "
            + "the target's retry budget\n# TYPE sluice_route_target_retries_refused_total counter\n");
        int index = -1;
        for (Route route : routes)
        {
            index++;
            if (route.failover == null)
                continue;
            for (TargetState t : route.failover.targets())
            {
                String labels = "router=\"" + label(binding) + "\",route=\"" + index + "\",target=\"" + label(t.name())
                    + "\"";
                TargetState.Health health = t.health(now);
                for (TargetState.Health h : TargetState.Health.values())
                {
                    state.append("sluice_route_target_state{").append(labels).append(",state=\"")
                        .append(h.name().toLowerCase(java.util.Locale.ROOT)).append("\"} ").append(h == health ? 1 : 0)
                        .append('\n');
                }
                ejections.append("sluice_route_target_ejections_total{").append(labels).append("} ").append(t.ejections())
                    .append('\n');
                refused.append("sluice_route_target_retries_refused_total{").append(labels).append("} ")
                    .append(t.budget.refused()).append('\n');
            }
        }
        return state.append(ejections).append(refused).toString();
    }

    /** @return {@code value} escaped for a label value of the text format (a backslash, a quote, a line break) */
    private static String label(String value)
    {
        return value.replace("\\", "\\\\").replace("\"", "\\\"").replace("\n", "\\n");
    }

    /**
     * Answers a model listing in the client's dialect: the advertised models the caller's key may use, in route order,
     * paged by the request's query as the dialect pages ({@link DialectCodec.ModelListCodec#encodePage}: the key's
     * filter applies first, so a page and its cursors hold only models the key may use), or one model a route serves
     * and the key may use. Answered here, where the routes are known; nothing goes upstream.
     */
    private CompletionStage<Reply> listing(Exchange exchange, Operation operation)
    {
        DialectCodec.ModelListCodec lists = exchange.codec() == null ? null : exchange.codec().modelLists();
        if (lists == null)
            return CompletableFuture.failedFuture(new GatewayException(ErrorKind.NOT_FOUND, 404,
                "the " + exchange.dialect() + " dialect has no model listing", null, null, null));
        Identity identity = exchange.identity();
        List<ModelGlob> allowed = identity == null ? List.of() : identity.models().stream().map(ModelGlob::compile).toList();
        if (operation == Operation.LIST_MODELS)
        {
            List<String> shown = allowed.isEmpty() ? advertisedModels
                : advertisedModels.stream().filter(m -> allows(allowed, m)).toList();
            byte[] page;
            try
            {
                page = lists.encodePage(shown, exchange.query());
            }
            catch (GatewayException e)
            {
                return CompletableFuture.failedFuture(e);
            }
            return CompletableFuture.completedFuture(new Reply.Bytes(200, JSON, page, null));
        }
        String model = exchange.model();
        if (!allows(allowed, model) || !routes(model))
            return CompletableFuture.failedFuture(notFound(model));
        return CompletableFuture.completedFuture(new Reply.Bytes(200, JSON, lists.encodeModel(model), null));
    }

    private static boolean allows(List<ModelGlob> allowed, String model)
    {
        if (allowed.isEmpty())
            return true;
        for (ModelGlob glob : allowed)
        {
            if (glob.matches(model))
                return true;
        }
        return false;
    }

    /** @return whether a route, or the fallback exit, takes {@code model} */
    private boolean routes(String model)
    {
        for (Route route : routes)
        {
            if (route.matches(model))
                return true;
        }
        return hasFallback;
    }

    private static GatewayException notFound(String model)
    {
        String shown = model.length() > MAX_ECHOED_MODEL ? model.substring(0, MAX_ECHOED_MODEL) + "..." : model;
        String message = "model: " + JsonStrings.quote(shown) + " is not served by this gateway";
        return new GatewayException(ErrorKind.NOT_FOUND, 404, message, "model", "model_not_found", null);
    }

    /** One compiled route: any of its globs selects it; then the alias, if any, and its exit. */
    static final class Route
    {
        private final ModelGlob[] when;
        private final String alias;
        private final Next exit;
        final FailoverRoute failover;

        /**
         * @param when  the conditions, any one of which selects the route; empty: always
         * @param alias the model to ask the upstream for, or {@code null} to keep the client's
         * @param exit  the stage to hand the exchange to
         */
        Route(List<ModelGlob> when, String alias, Next exit)
        {
            this.when = when.toArray(new ModelGlob[0]);
            this.alias = alias;
            this.exit = exit;
            this.failover = null;
        }

        /** A route with targets: the exchange goes through {@code failover}'s attempts. */
        Route(List<ModelGlob> when, FailoverRoute failover)
        {
            this.when = when.toArray(new ModelGlob[0]);
            this.alias = null;
            this.exit = null;
            this.failover = failover;
        }

        /** @return whether any condition matches {@code model}, or the route has none */
        boolean matches(String model)
        {
            if (when.length == 0)
                return true;
            for (ModelGlob glob : when)
            {
                if (glob.matches(model))
                    return true;
            }
            return false;
        }
    }
}
