package dev.sluice.bench.cell;

/**
 * One named benchmark cell: what load, against which mock profile, measured how.
 *
 * @param name        the fixed name, e.g. {@code S1-5k}
 * @param kind        how the cell is run
 * @param title       one line for the report
 * @param rate        open loop: requests (or streams) per second; ladders: unused
 * @param mock        the mock provider's latency profile
 * @param bodyBytes   the approximate size of the request body
 * @param stream      whether requests ask for an SSE stream
 * @param h2c         HTTP/2 in clear text on both sides of the gateway (and for the direct run); see also
 *                    {@link #upstreamH2c()}
 * @param connections the generator's connection bound (HTTP/1.1) or connection count (h2c)
 * @param workers     closed loop: the number of workers; 0 for open loop
 * @param upstreamMaxConnections the gateway's pool size towards the mock
 * @param nginx       whether the nginx byte pipe is measured as a third target
 * @param skipReason  why the cell is not run, or {@code null}
 * @param client      the dialect the load generator speaks to the gateway ({@code openai} or {@code anthropic})
 * @param provider    the dialect the gateway speaks to the mock, and the direct run's dialect
 */
record Cell(String name, Kind kind, String title, double rate, MockProfile mock, int bodyBytes, boolean stream, boolean h2c,
            int connections, int workers, int upstreamMaxConnections, boolean nginx, String skipReason, String client,
            String provider)
{
    /** A same-dialect OpenAI cell. */
    Cell(String name, Kind kind, String title, double rate, MockProfile mock, int bodyBytes, boolean stream, boolean h2c,
         int connections, int workers, int upstreamMaxConnections, boolean nginx, String skipReason)
    {
        this(name, kind, title, rate, mock, bodyBytes, stream, h2c, connections, workers, upstreamMaxConnections, nginx,
            skipReason, Dialects.OPENAI, Dialects.OPENAI);
    }

    /**
     * @param options the session's options
     * @return the gateway's pool size towards the mock in that session: {@code --upstream-pool}'s, else the cell's
     */
    int upstreamMaxConnections(BenchOptions options)
    {
        return options.upstreamPool() > 0 ? options.upstreamPool() : upstreamMaxConnections;
    }

    /** @return the status a {@link Kind#REFUSAL} cell's requests must get: 401 for R401 (unknown key), else 404 */
    int refusalStatus()
    {
        return virtualKeys() ? 401 : 404;
    }

    /**
     * @return whether the gateway checks virtual keys in this cell: a {@code keys} binding with one key
     *         ({@link Cells#GATEWAY_KEY}) in front of the router, and the load sends another one ({@link Cells#UNKNOWN_KEY})
     */
    boolean virtualKeys()
    {
        return "R401".equals(name);
    }

    /**
     * @return whether every request passes the guardrail plugins (S1-5k-guard): a {@code keys} binding with one key
     *         ({@link Cells#GATEWAY_KEY}, which the load sends), {@code limits} with a per-key rate limit never reached
     *         and {@code guard} with one deny rule on requests, in front of the router
     */
    boolean guardrails()
    {
        return "S1-5k-guard".equals(name);
    }

    /**
     * @return where the limits of S1-5k-limits, S1-5k-limits-redis and their 1,000 req/s twins live: {@code "memory"} or {@code "redis"} (a
     *         {@code keys} binding with one key, which the load sends, and a {@code limits} binding with a per-key rate
     *         and concurrency limit never reached, in front of the router), or {@code null} when the cell has no such
     *         pair
     */
    String limitsStore()
    {
        return switch (name)
        {
            case "S1-5k-limits", "S1-1k-limits" -> "memory";
            case "S1-5k-limits-redis", "S1-1k-limits-redis" -> "redis";
            default -> null;
        };
    }

    /**
     * @return how the response cache is in this cell: {@code "hit"} (a {@code cache} binding in front of the
     *         router; every request the same, so all but the first are hits), {@code "miss"} (the same binding, every
     *         request with {@code Cache-Control: no-cache}: the key is computed from the decoded request, the answer
     *         asked for in canonical form, relayed (a stream recorded) and stored — a miss without the lookup), or
     *         {@code null} for no cache
     */
    String cache()
    {
        return switch (name)
        {
            case "S1-5k-cache-hit", "S1-5k-embed-hit", "S1-1k-embed-hit-1536" -> "hit";
            case "S1-5k-cache-miss", "S3-stream-cache" -> "miss";
            default -> null;
        };
    }

    /**
     * @return whether every request passes the observability plugins (S1-5k-obs): a {@code log} binding
     *         writing one JSON line per exchange to a file in the run's folder and a {@code metrics} binding counting
     *         it into Prometheus metrics, in front of the router
     */
    boolean observability()
    {
        return "S1-5k-obs".equals(name);
    }

    /**
     * @return how the router reaches the mock in this cell: one exit, or a route with targets whose cost the cell
     *         measures (S1-5k-targets, S3-stream-targets: two weighted targets; S1-5k-ejected: an ejected primary)
     */
    Route route()
    {
        return switch (name)
        {
            case "S1-5k-targets", "S3-stream-targets" -> Route.WEIGHTED_TARGETS;
            case "S1-5k-ejected" -> Route.EJECTED_PRIMARY;
            case "S1-5k-targets-one" -> Route.WEIGHTED_ONE_CLIENT;
            default -> Route.EXIT;
        };
    }

    /**
     * @return whether the gateway speaks h2c (prior knowledge) to the mock: in every {@link #h2c()} cell, and in
     *         HICCUP-up-h2c, where the clients speak HTTP/1.1 to the gateway and the gateway multiplexes its requests over
     *         a few h2c connections to the mock, as it does by default to an {@code https} provider (h2)
     */
    boolean upstreamH2c()
    {
        return h2c || "HICCUP-up-h2c".equals(name);
    }

    /** @return whether the gateway translates between two dialects in this cell */
    boolean translates()
    {
        return !client.equals(provider);
    }

    /** How the router reaches the mock. */
    enum Route
    {
        /** {@code exit: south}: the route's one client binding. */
        EXIT,
        /**
         * {@code targets}: {@code south} (weight 3) and {@code south_b} (weight 1), two client bindings with the same
         * options, both to the mock; a stream is held until its first content (the default).
         */
        WEIGHTED_TARGETS,
        /**
         * {@code targets}: {@code south} twice (weights 3 and 1), one client binding and its one upstream pool: the
         * route's pick and attempt bookkeeping without a second pool.
         */
        WEIGHTED_ONE_CLIENT,
        /**
         * {@code targets}: {@code south_down} at priority 0, a client binding to {@link Ports#refused()}, and
         * {@code south} at priority 1; {@code eject: { consecutive: 1, base: 5m, max: 5m }} and
         * {@code retry: { attempts: 2 }}, so that the first request's refused connection ejects the primary for five
         * minutes and every later request skips it without a connection attempt.
         */
        EJECTED_PRIMARY
    }

    /** How a cell is run. */
    enum Kind
    {
        /** One open-loop run per target and repetition. */
        OPEN,
        /** One closed-loop run per target and repetition. */
        CLOSED,
        /** A rate ladder per repetition: gateway, direct and nginx until each fails the saturation criteria. */
        SAT,
        /**
         * A rate ladder of requests the gateway must refuse, against the gateway only, checking the mock saw none:
         * R404 an unknown model (the router), R401 an unknown key (a keys binding); see {@link #refusalStatus()}.
         */
        REFUSAL,
        /**
         * A gateway's answer to a change of load or a stall, over time in 100 ms windows: STEP, HICCUP, COLD-1k,
         * COLD-3k, OVERLOAD ({@link Resilience}).
         */
        RESILIENCE,
        /** No load: the RSS of a freshly started gateway. */
        IDLE,
        /** Listed, not run. */
        SKIPPED
    }

    /** @return the protocol both sides speak, as a report shows it */
    String protocol()
    {
        return h2c ? "h2c" : "HTTP/1.1";
    }
}
