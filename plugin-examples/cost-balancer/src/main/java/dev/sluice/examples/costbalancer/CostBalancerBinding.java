package dev.sluice.examples.costbalancer;

import dev.sluice.api.ErrorKind;
import dev.sluice.api.GatewayException;
import dev.sluice.api.binding.ProxyBinding;
import dev.sluice.api.binding.BindingContext.Target;
import dev.sluice.support.json.JsonStrings;
import dev.sluice.support.config.ModelGlob;
import dev.sluice.api.exchange.Exchange.Attempt;
import dev.sluice.api.exchange.Exchange;
import dev.sluice.api.exchange.Next;
import dev.sluice.api.exchange.Reply;
import dev.sluice.support.upstream.StreamHold;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * Sends each request to the cheapest target of the first route whose {@code when} matches its model, skipping targets
 * with {@code max_inflight} attempts in flight; when that attempt fails in a way another provider may not (unreachable,
 * a timeout, a 5xx, a 429), it tries the next cheapest target with room, once.
 *
 * <h2>The SPI pieces it uses</h2>
 * <ul>
 *   <li>{@link Target}: one per target, resolved by the factory. {@link Target#inFlight()} counts the attempts sent
 *   through it that have not ended — for a stream, until it ends — whichever binding sent them, so {@code max_inflight}
 *   needs no counter here. {@link Target#handle(Exchange)} is the target's stage: it sends the current attempt.</li>
 *   <li>{@link Exchange#startAttempt(String)}, before each try: the exchange records the try as an {@link Attempt} (its
 *   target, upstream timings, status and result, listed by {@code Exchange.attempts()} for logs and metrics) and puts
 *   the target model back to the one the route matched, so a try never inherits an alias a previous one set.</li>
 *   <li>{@link Attempt#fail(Throwable)}, when a try failed and the binding moves on: the attempt ends failed with the
 *   error's kind and leaves its target's in-flight count. If it had ended already, cancelled because the client left or
 *   the gateway is stopping, {@code fail} changes nothing and nobody is left to answer. The attempt whose error the
 *   client gets is not failed: it ends with the exchange, as the one that answered.</li>
 *   <li>{@link StreamHold#hold}: a provider can accept a streamed request and break before its first token. The hold
 *   reads the stream up to its first content (or its limits) and only then completes, so such a break is a failed
 *   stage like any other; after the first content the client has the stream and nothing is tried again.</li>
 * </ul>
 *
 * <p>Never blocks: the fallback runs on the thread that completed the first attempt's stage, with no hand-off.
 * Thread-safe: immutable after creation.
 */
final class CostBalancerBinding implements ProxyBinding
{
    /** What a stream may hold before its first content (a message start, a role chunk, pings): plenty for any dialect. */
    private static final int HELD_ITEMS = 32;
    private static final long HELD_BYTES = 64 * 1024;
    // A model name is client input echoed in the 404 message: capped so a huge one cannot bloat the error.
    private static final int MAX_ECHOED_MODEL = 200;

    private final Route[] routes;
    private final int maxInflight;
    // Built once: the refusal is the same every time.
    private final GatewayException busy;

    /**
     * @param routes      the routes in config order, their targets cheapest first
     * @param maxInflight a target with this many attempts in flight is skipped
     */
    CostBalancerBinding(List<Route> routes, int maxInflight)
    {
        this.routes = routes.toArray(new Route[0]);
        this.maxInflight = maxInflight;
        this.busy = new GatewayException(ErrorKind.UNAVAILABLE, 503, "every target of the route has " + maxInflight
            + " requests in flight (cost-balancer max_inflight)", null, null, null);
    }

    @Override
    public CompletionStage<Reply> handle(Exchange exchange, Next next)
    {
        Route route = route(exchange.targetModel());
        if (route == null)
            return CompletableFuture.failedFuture(notFound(exchange.model()));
        Target first = cheapestWithRoom(route, null);
        if (first == null)
            return CompletableFuture.failedFuture(busy);
        Attempt attempt = exchange.startAttempt(first.name());
        CompletionStage<Reply> reply = first.handle(exchange);
        if (route.targets.length == 1)
            return reply;
        return reply.thenCompose(CostBalancerBinding::holdStream)
            .exceptionallyCompose(failure -> fallBack(exchange, route, first, attempt, failure));
    }

    /** @return a stage that completes once a streamed reply showed its first content, and fails if it broke before */
    private static CompletionStage<Reply> holdStream(Reply reply)
    {
        if (reply instanceof Reply.Stream stream)
            return StreamHold.hold(stream, HELD_ITEMS, HELD_BYTES).thenApply(Reply.class::cast);
        return CompletableFuture.completedFuture(reply);
    }

    /** The first attempt failed: the second, at the next cheapest target with room, if the failure is worth one. */
    private CompletionStage<Reply> fallBack(Exchange exchange, Route route, Target failed, Attempt attempt, Throwable failure)
    {
        GatewayException error = GatewayException.of(failure);
        Target second = worthAnotherTarget(error, attempt.status()) ? cheapestWithRoom(route, failed) : null;
        if (second == null)
            return CompletableFuture.failedFuture(error);
        attempt.fail(error);
        // The first end wins: cancelled already means the client left or the gateway is stopping, so nobody waits.
        if (attempt.result() == Attempt.Result.CANCELLED)
            return CompletableFuture.failedFuture(error);
        exchange.startAttempt(second.name());
        return second.handle(exchange);
    }

    /**
     * @param upstreamStatus the status the upstream answered the attempt with ({@link Attempt#status()}), 0 if none
     * @return whether another target may do better: this one was unreachable, too slow, or answered 5xx or 429 (as its
     *         status, or as an error event before the stream's first content)
     */
    static boolean worthAnotherTarget(GatewayException error, int upstreamStatus)
    {
        if (error.kind() == ErrorKind.UPSTREAM_UNAVAILABLE || error.kind() == ErrorKind.UPSTREAM_TIMEOUT)
            return true;
        if (error.kind() == ErrorKind.INTERNAL)
            return false;
        // The upstream's own status when it sent an error one: a 401 reaches the client as a 502, and is no reason to
        // move on. A stream that began with 200 and then sent an error event has only the error's status.
        int status = upstreamStatus >= 400 ? upstreamStatus : error.status();
        return status == 429 || status >= 500;
    }

    /** @return the cheapest target of {@code route} other than {@code except} with fewer than max_inflight attempts, or null */
    private Target cheapestWithRoom(Route route, Target except)
    {
        for (Target target : route.targets)
        {
            if (target != except && target.inFlight() < maxInflight)
                return target;
        }
        return null;
    }

    private Route route(String model)
    {
        for (Route route : routes)
        {
            if (route.matches(model))
                return route;
        }
        return null;
    }

    private static GatewayException notFound(String model)
    {
        String shown = model.length() > MAX_ECHOED_MODEL ? model.substring(0, MAX_ECHOED_MODEL) + "..." : model;
        return new GatewayException(ErrorKind.NOT_FOUND, 404, "model: " + JsonStrings.quote(shown)
            + " is not served by this gateway", "model", "model_not_found", null);
    }

    /** One route: any of its globs selects it (none: every model), and its targets, cheapest first. */
    static final class Route
    {
        private final ModelGlob[] when;
        private final Target[] targets;

        Route(ModelGlob[] when, Target[] targets)
        {
            this.when = when;
            this.targets = targets;
        }

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
