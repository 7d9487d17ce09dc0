package dev.sluice.plugin.log;

import java.time.Duration;
import java.util.List;

/**
 * The options of a {@code log} binding, bound strictly by {@link dev.sluice.support.config.Options#bind} (unknown keys and
 * wrong types are startup errors naming their path):
 *
 * <pre>{@code
 * options:
 *   path: /var/log/sluice/requests.jsonl   # "-": standard output (no rotation)
 *   max_bytes: 100MiB                      # rotate before a line would take the file past this; 0: never by size
 *   rotate_every: 1h                       # also rotate at each multiple of this since the epoch (UTC); absent: never
 *   keep: 10                               # rotated files kept, the oldest deleted
 *   queue: 8192                            # records waiting for the writer; past this they are dropped and counted
 *   drain_at: 4096                         # a drain starts as soon as this many wait; 0: only every flush_interval
 *   flush_interval: 1s                     # the writer drains and flushes at least this often
 *   bodies: { routes: [ south_openai ], max_bytes: 4KiB }   # prompts and answers, only on these routes
 *   admin_path: /log/stats
 * }</pre>
 *
 * <p>Sizes are a number of bytes or a string with a unit ({@link Sizes}). After construction {@link #maxBytes()} is a
 * {@link Long}, the defaults filled.
 *
 * @param path          the file the lines go to (created if absent, appended to), relative to the working directory,
 *                      or {@code "-"} for standard output; required
 * @param maxBytes      the size a file may reach before it is rotated; default 100 MiB; 0 turns size rotation off
 * @param rotateEvery   the period of time rotation, at least 1s, aligned on the epoch in UTC ({@code 1h} rotates on
 *                      the hour, {@code 24h} at midnight UTC); {@code null}: no time rotation
 * @param keep          how many rotated files are kept, 1 to 100,000; default 10
 * @param queue         how many records may wait for the writer, 2 to 1,048,576; default 8192
 * @param drainAt       how many waiting records make a completion ask for a drain at once, 0 to {@code queue}; default
 *                      half the queue; 0: records are drained only every {@code flush_interval}
 * @param flushInterval how often the writer drains the queue and flushes the file, 10ms to 1h; default 1s
 * @param bodies        which exchanges have their prompt and answer logged, or {@code null} for none
 * @param adminPath     where the admin listener serves the writer's figures; default {@code /log/stats}
 */
public record LogOptions(String path, Object maxBytes, Duration rotateEvery, Integer keep, Integer queue, Integer drainAt,
                         Duration flushInterval, BodiesOptions bodies, String adminPath)
{
    /** {@link #path()} meaning standard output. */
    public static final String STDOUT = "-";
    /** The default {@link #maxBytes()}: 100 MiB. */
    public static final long DEFAULT_MAX_BYTES = 100L << 20;
    /** The largest {@link #queue()}. */
    public static final int MAX_QUEUE = 1 << 20;

    /** Validates every option and fills the defaults. */
    public LogOptions
    {
        if (path == null || path.isBlank())
            throw new IllegalArgumentException("path: must be set (expected: the file the request log is written to, or -"
                + " for standard output)");
        if (path.equals(STDOUT) && (maxBytes != null || rotateEvery != null || keep != null))
            throw new IllegalArgumentException("path: value: \"-\" (expected: a file when max_bytes, rotate_every or keep"
                + " is set: standard output is not rotated)");
        maxBytes = Sizes.parse("max_bytes", maxBytes, DEFAULT_MAX_BYTES);
        if (rotateEvery != null && rotateEvery.toMillis() < 1_000)
            throw new IllegalArgumentException("rotate_every: value: " + rotateEvery + " (expected: at least 1s)");
        if (keep == null)
            keep = 10;
        else if (keep < 1 || keep > 100_000)
            throw new IllegalArgumentException("keep: value: " + keep + " (expected: 1 to 100000)");
        if (queue == null)
            queue = 8192;
        else if (queue < 2 || queue > MAX_QUEUE)
            throw new IllegalArgumentException("queue: value: " + queue + " (expected: 2 to " + MAX_QUEUE + ")");
        if (drainAt == null)
            drainAt = queue / 2;
        else if (drainAt < 0 || drainAt > queue)
            throw new IllegalArgumentException("drain_at: value: " + drainAt + " (expected: 0 to the queue's " + queue + ")");
        if (flushInterval == null)
            flushInterval = Duration.ofSeconds(1);
        else if (flushInterval.toMillis() < 10 || flushInterval.compareTo(Duration.ofHours(1)) > 0)
            throw new IllegalArgumentException("flush_interval: value: " + flushInterval + " (expected: 10ms to 1h)");
        if (adminPath == null)
            adminPath = "/log/stats";
        else if (!adminPath.startsWith("/") || adminPath.indexOf('?') >= 0)
            throw new IllegalArgumentException("admin_path: value: \"" + adminPath + "\" (expected: a path starting with /,"
                + " no query)");
    }

    /** @return {@link #maxBytes()} as a number: 0 for no size rotation */
    public long maxFileBytes()
    {
        return (Long)maxBytes;
    }

    /** @return whether the lines go to standard output */
    public boolean stdout()
    {
        return path.equals(STDOUT);
    }

    /**
     * Which exchanges have their prompt and answer logged.
     *
     * @param routes   the routes — client binding names, as the log's {@code route} field shows them — whose exchanges
     *                 carry their bodies; {@code "*"} for every exchange that has a body; required, not empty
     * @param maxBytes how many bytes of each body are logged at most, 1 to 1 MiB; default 4 KiB. After construction a
     *                 {@link Long}
     */
    public record BodiesOptions(List<String> routes, Object maxBytes)
    {
        /** The default {@link #maxBytes()}: 4 KiB. */
        public static final long DEFAULT_MAX_BYTES = 4096;

        /** Validates both and fills the default size. */
        public BodiesOptions
        {
            if (routes == null || routes.isEmpty())
                throw new IllegalArgumentException("routes: must be set (expected: a list of route names, the client"
                    + " bindings whose exchanges log their bodies, or [\"*\"])");
            for (int i = 0; i < routes.size(); i++)
            {
                String route = routes.get(i);
                if (route == null || route.isBlank())
                    throw new IllegalArgumentException("routes[" + i + "]: must not be blank (expected: a client binding's"
                        + " name, or *)");
            }
            routes = List.copyOf(routes);
            maxBytes = Sizes.parse("max_bytes", maxBytes, DEFAULT_MAX_BYTES);
            long n = (Long)maxBytes;
            if (n < 1 || n > 1L << 20)
                throw new IllegalArgumentException("max_bytes: value: " + n + " (expected: 1 to 1MiB)");
        }

        /** @return {@link #maxBytes()} as an int */
        public int bodyBytes()
        {
            return (int)(long)(Long)maxBytes;
        }

        /** @return whether every route logs its bodies */
        public boolean allRoutes()
        {
            return routes.contains("*");
        }
    }
}
