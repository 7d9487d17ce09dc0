package dev.sluice.bench.cell;

/**
 * The gateway config a cell runs with: a server binding, a router and a client binding pointed at the mock (OpenAI on
 * both sides unless the cell translates). Nothing else is in the chain, so the figures are the cost of the runtime,
 * the dialect's fast path (or the translation) and the router. The cells that measure a plugin put it in front of the
 * router; the cells that measure a route with targets ({@link Cell#route()}) give the router more client bindings.
 */
final class GatewayConfigs
{
    private GatewayConfigs()
    {
    }

    /**
     * The config a cell's gateway runs with: its protocol, upstream pool and dialects, the plugins the cell puts in
     * front of the router (keys for R401; keys, limits and guard for S1-5k-guard; the cache for the cache cells; log
     * and metrics for S1-5k-obs) and its route ({@link Cell#route()}: one exit, or targets).
     *
     * @param cell the cell whose chain it is (for {@code --pair}'s baseline, {@link Cells#baseline(Cell)})
     * @param port the gateway's port
     * @param mockPort the mock's port
     * @param routeAll see {@link #yaml(int, int, boolean, int, boolean, int)}
     * @param stagesPort the admin listener's port for the per-stage table, or -1
     * @param requestLog the request log file, used only when the cell has the log binding
     * @return the YAML
     */
    static String yaml(Cell cell, int port, int mockPort, boolean routeAll, int stagesPort, String requestLog)
    {
        return yaml(cell, cell.upstreamMaxConnections(), port, mockPort, routeAll, stagesPort, requestLog, null);
    }

    /**
     * As {@link #yaml(Cell, int, int, boolean, int, String)}, with an upstream pool of {@code maxConnections} (the cell's
     * own, or {@code --upstream-pool}'s) and the limits of a cell whose counters live in Redis
     * ({@link Cell#limitsStore()} {@code "redis"}) kept at {@code redisUrl}.
     */
    static String yaml(Cell cell, int maxConnections, int port, int mockPort, boolean routeAll, int stagesPort,
                       String requestLog, String redisUrl)
    {
        String keySha256 = cell.virtualKeys() || cell.guardrails() || cell.limitsStore() != null
            ? Cells.sha256Hex(Cells.GATEWAY_KEY) : null;
        String limits = cell.limitsStore() == null ? null
            : "memory".equals(cell.limitsStore()) ? "" : "      store: { redis: { url: \"" + redisUrl + "\" } }\n";
        return front(port, stagesPort, cell.client(), keySha256, cell.guardrails(), cell.cache() != null,
                cell.observability() ? requestLog : null, limits) +
            router(cell.route(), routeAll, cell.stream()) +
            clients(cell.route(), cell.provider(), mockPort, cell.upstreamH2c(), maxConnections);
    }

    /**
     * @param port the gateway's port (also passed with {@code --port})
     * @param mockPort the mock's port
     * @param h2c whether the gateway speaks h2c to the mock
     * @param maxConnections the client binding's pool size
     * @param routeAll {@code true}: route {@code *}; {@code false}: only {@code bench-*}, so that R404's model matches
     *                 no route and is rejected without an upstream call
     * @param stagesPort the admin listener's port for the per-stage table ({@code admin: { port, stages: true }}), or
     *                   -1 for no table
     * @return the YAML
     */
    static String yaml(int port, int mockPort, boolean h2c, int maxConnections, boolean routeAll, int stagesPort)
    {
        return yaml(port, mockPort, h2c, maxConnections, routeAll, stagesPort, Dialects.OPENAI, Dialects.OPENAI);
    }

    /**
     * As {@link #yaml(int, int, boolean, int, boolean, int)} with a server binding of the {@code client} dialect
     * and a client binding of the {@code provider} dialect: the gateway translates when they differ.
     */
    static String yaml(int port, int mockPort, boolean h2c, int maxConnections, boolean routeAll, int stagesPort,
                       String client, String provider)
    {
        return yaml(port, mockPort, h2c, maxConnections, routeAll, stagesPort, client, provider, null, false);
    }

    /**
     * As {@link #yaml(int, int, boolean, int, boolean, int, String, String)}, with a {@code keys} binding between the
     * server binding and the router when {@code keySha256} is set: one virtual key, the SHA-256 (hex) given (R401);
     * with {@code guardrails}, also {@code limits} (a per-key rate limit the load never reaches: its counters still run
     * on every request) and {@code guard} (one deny rule on requests, which decodes every request) after it
     * (S1-5k-guard).
     */
    static String yaml(int port, int mockPort, boolean h2c, int maxConnections, boolean routeAll, int stagesPort,
                       String client, String provider, String keySha256, boolean guardrails)
    {
        return yaml(port, mockPort, h2c, maxConnections, routeAll, stagesPort, client, provider, keySha256, guardrails,
            false, null);
    }

    /**
     * As {@link #yaml(int, int, boolean, int, boolean, int, String, String, String, boolean)}, with a {@code cache}
     * binding in front of the router when {@code cache} is set (S1-5k-cache-hit, S1-5k-cache-miss, S3-stream-cache),
     * and {@code log} and {@code metrics} bindings in front of that when {@code requestLog} names the log file
     * (S1-5k-obs).
     */
    static String yaml(int port, int mockPort, boolean h2c, int maxConnections, boolean routeAll, int stagesPort,
                       String client, String provider, String keySha256, boolean guardrails, boolean cache,
                       String requestLog)
    {
        return front(port, stagesPort, client, keySha256, guardrails, cache, requestLog, null) +
            router(Cell.Route.EXIT, routeAll, false) +
            clients(Cell.Route.EXIT, provider, mockPort, h2c, maxConnections);
    }

    /**
     * @param limits the extra options of a limits binding between keys and the rest (S1-5k-limits: {@code ""},
     *               S1-5k-limits-redis: its {@code store}), or {@code null} for none
     * @return the listener, the server binding and the plugins in front of the router, which they all exit to
     */
    private static String front(int port, int stagesPort, String client, String keySha256, boolean guardrails, boolean cache,
                                String requestLog, String limits)
    {
        String beforeRouter = cache ? "cache" : "router";
        String afterAuth = requestLog != null ? "log" : beforeRouter;
        return "# Generated by dev.sluice.bench.cell for one bench run.\n" +
            "listen: { host: 127.0.0.1, port: " + port + " }\n" +
            "shutdown: { grace: 1s }\n" +
            (stagesPort >= 0 ? "admin: { host: 127.0.0.1, port: " + stagesPort + ", stages: true }\n" : "") +
            "bindings:\n" +
            "  north:\n" +
            "    type: " + Dialects.bindingType(client) + "\n" +
            "    kind: server\n" +
            "    exit: " + (keySha256 == null ? afterAuth : "keys") + "\n" +
            (keySha256 == null ? "" :
                "  keys:\n" +
                "    type: keys\n" +
                "    kind: proxy\n" +
                "    exit: " + (guardrails || limits != null ? "limits" : afterAuth) + "\n" +
                "    options:\n" +
                "      keys: [ { id: bench, sha256: \"" + keySha256 + "\" } ]\n") +
            (limits == null ? "" :
                "  limits:\n" +
                "    type: limits\n" +
                "    kind: proxy\n" +
                "    exit: " + afterAuth + "\n" +
                "    options:\n" +
                "      key: { rpm: 100000000, max_concurrent: 100000 }\n" +
                limits) +
            (!guardrails ? "" :
                "  limits:\n" +
                "    type: limits\n" +
                "    kind: proxy\n" +
                "    exit: guard\n" +
                "    options:\n" +
                "      key: { rpm: 100000000, max_concurrent: 100000 }\n" +
                "  guard:\n" +
                "    type: guard\n" +
                "    kind: proxy\n" +
                "    exit: " + afterAuth + "\n" +
                "    options:\n" +
                "      deny: { codenames: [ \"(?i)project\\\\s+falcon\" ] }\n" +
                "      request: [ { rule: codenames, action: block } ]\n") +
            (requestLog == null ? "" :
                "  log:\n" +
                "    type: log\n" +
                "    kind: proxy\n" +
                "    exit: metrics\n" +
                "    options: { path: \"" + requestLog + "\" }\n" +
                "  metrics:\n" +
                "    type: metrics\n" +
                "    kind: proxy\n" +
                "    exit: " + beforeRouter + "\n") +
            (!cache ? "" :
                "  cache:\n" +
                "    type: cache\n" +
                "    kind: proxy\n" +
                "    exit: router\n");
    }

    /**
     * @param route one exit or which targets
     * @param routeAll see {@link #yaml(int, int, boolean, int, boolean, int)}
     * @param stream whether the cell streams: a route with targets then says that it holds each stream until its first
     *               content (its default), so that the config names what the cell measures
     * @return the router binding with its one route
     */
    private static String router(Cell.Route route, boolean routeAll, boolean stream)
    {
        String head = "  router:\n" +
            "    type: router\n" +
            "    kind: proxy\n" +
            "    routes:\n" +
            "      - when: [ { model: \"" + (routeAll ? "*" : "bench-*") + "\" } ]\n";
        String hold = stream ? "        stream: { commit: first_content }\n" : "";
        return head + switch (route)
        {
            case EXIT -> "        exit: south\n";
            case WEIGHTED_TARGETS -> "        targets:\n" +
                "          - { exit: south, weight: 3 }\n" +
                "          - { exit: south_b, weight: 1 }\n" +
                hold;
            case WEIGHTED_ONE_CLIENT -> "        targets:\n" +
                "          - { exit: south, weight: 3 }\n" +
                "          - { exit: south, weight: 1 }\n" +
                hold;
            // One refused connection ejects the primary for 5 minutes, longer than a repetition's gateway lives with
            // the default --jvm-warmup; the second attempt carries that first request to the fallback.
            case EJECTED_PRIMARY -> "        targets:\n" +
                "          - { exit: south_down, priority: 0 }\n" +
                "          - { exit: south, priority: 1 }\n" +
                "        retry: { attempts: 2 }\n" +
                "        eject: { consecutive: 1, base: 5m, max: 5m }\n" +
                hold;
        };
    }

    /**
     * @return the route's client bindings: {@code south} to the mock; with weighted targets also {@code south_b}, the
     *         same options; with an ejected primary also {@code south_down}, the same options but a port that refuses
     *         every connection ({@link Ports#refused()})
     */
    private static String clients(Cell.Route route, String provider, int mockPort, boolean h2c, int maxConnections)
    {
        String south = client("south", provider, mockPort, h2c, maxConnections);
        return switch (route)
        {
            case EXIT, WEIGHTED_ONE_CLIENT -> south;
            case WEIGHTED_TARGETS -> south + client("south_b", provider, mockPort, h2c, maxConnections);
            case EJECTED_PRIMARY -> south + client("south_down", provider, Ports.refused(), h2c, maxConnections);
        };
    }

    private static String client(String name, String provider, int port, boolean h2c, int maxConnections)
    {
        return "  " + name + ":\n" +
            "    type: " + Dialects.bindingType(provider) + "\n" +
            "    kind: client\n" +
            "    options:\n" +
            "      url: \"http://127.0.0.1:" + port + "/v1\"\n" +
            "      http: { version: " + (h2c ? "h2c" : "http/1.1") + ", max_connections: " + maxConnections + " }\n";
    }
}
