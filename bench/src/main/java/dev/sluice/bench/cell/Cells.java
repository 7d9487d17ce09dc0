package dev.sluice.bench.cell;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The catalog of cells. The names and loads are fixed (rates scaled to a 2-core machine where generator,
 * mock and gateway share the CPUs).
 */
final class Cells
{
    /** The model every routed request names; the gateway's route {@code *} (or {@code bench-*} in R404) takes it. */
    static final String MODEL = "bench-model";
    /** The one key R401's gateway accepts ({@code keys} binding); the flood never sends it. */
    static final String GATEWAY_KEY = "sk-sluice-bench-the-one-key-r401-accepts";
    /** The key R401 floods with: not the gateway's. */
    static final String UNKNOWN_KEY = "sk-sluice-bench-unknown-key-of-the-r401-flood";
    /** The model R404 floods with: no route matches it. */
    static final String UNKNOWN_MODEL = "no-such-model";
    /** The ordinary body size: a short system prompt and question, about 0.5 KB like the JMH case. */
    static final int SMALL_BODY = 512;
    /** S2-large's body. */
    static final int LARGE_BODY = 100 * 1024;
    /** SAT's ladder, req/s; the reported saturation is the highest step that passed (a lower bound). */
    static final List<Double> SAT_LADDER = List.of(1000.0, 2000.0, 3000.0, 4000.0, 5000.0, 6500.0, 8000.0, 10000.0,
        12500.0, 15000.0, 20000.0);
    /** R404's ladder, req/s. */
    static final List<Double> R404_LADDER = List.of(2500.0, 5000.0, 10000.0, 15000.0, 20000.0, 25000.0, 30000.0,
        40000.0);

    private static final Map<String, Cell> ALL = new LinkedHashMap<>();

    static
    {
        MockProfile l0 = MockProfile.L0;
        add(new Cell("S1-1k", Cell.Kind.OPEN, "OpenAI chat, 1,000 req/s, L0, HTTP/1.1", 1000, l0, SMALL_BODY, false,
            false, 256, 0, 512, true, null));
        add(new Cell("S1-5k", Cell.Kind.OPEN, "OpenAI chat, 5,000 req/s, L0, HTTP/1.1", 5000, l0, SMALL_BODY, false,
            false, 512, 0, 512, true, null));
        // The paired method's control: S1-5k paired with S1-5k. Its paired cost is what the method reads when there is
        // nothing to measure (the order of the two schedules, the two processes' placement), to set a cell's against.
        add(new Cell("S1-5k-aa", Cell.Kind.OPEN, "S1-5k paired with itself (--pair): the paired method's control, whose "
            + "cost should read 0", 5000, l0, SMALL_BODY, false, false, 512, 0, 512, false, null));
        // S1-5k through keys, limits and guard (target: overhead p50 at most 10 µs above S1-5k in the same run).
        add(new Cell("S1-5k-guard", Cell.Kind.OPEN, "S1-5k with one key checked, a per-key limit and a guard rule on "
            + "every request", 5000, l0, SMALL_BODY, false, false, 512, 0, 512, true, null));
        // Keys and limits, the counters in memory and then in Redis (paired: the Redis store's cost over the memory
        // store's; target: at most one loopback round trip + 15 µs at p50).
        add(new Cell("S1-5k-limits", Cell.Kind.OPEN, "S1-5k with one key checked and a per-key rate and concurrency "
            + "limit (in memory) on every request", 5000, l0, SMALL_BODY, false, false, 512, 0, 512, false, null));
        add(new Cell("S1-5k-limits-redis", Cell.Kind.OPEN, "S1-5k-limits with the counters in Redis (a local "
            + "redis-server): one script per request, the reserve carrying the settles before it", 5000, l0, SMALL_BODY, false, false, 512, 0,
            512, false, null));
        // The same pair at a rate one core carries with room: the Redis store's latency apart from its CPU.
        add(new Cell("S1-1k-limits", Cell.Kind.OPEN, "S1-5k-limits at 1,000 req/s", 1000, l0, SMALL_BODY, false, false,
            256, 0, 512, false, null));
        add(new Cell("S1-1k-limits-redis", Cell.Kind.OPEN, "S1-5k-limits-redis at 1,000 req/s", 1000, l0, SMALL_BODY,
            false, false, 256, 0, 512, false, null));
        // The request log and metrics together (target: overhead p50 at most 10 µs above S1-5k in the same run).
        add(new Cell("S1-5k-obs", Cell.Kind.OPEN, "S1-5k through the log (a JSON line per exchange to a file) and "
            + "metrics bindings", 5000, l0, SMALL_BODY, false, false, 512, 0, 512, false, null));
        // The response cache's costs: a miss over S1-5k, a hit against the direct run, streams recorded.
        add(new Cell("S1-5k-cache-miss", Cell.Kind.OPEN, "S1-5k through a cache binding, every request a miss "
            + "(Cache-Control: no-cache: key computed, answer stored)", 5000, l0, SMALL_BODY, false, false, 512, 0, 512,
            false, null));
        add(new Cell("S1-5k-cache-hit", Cell.Kind.OPEN, "S1-5k through a cache binding, every request the same: hits",
            5000, l0, SMALL_BODY, false, false, 512, 0, 512, false, null));
        // Embeddings are the best-cached answers there are: a hit should cost less than the direct call to the mock.
        add(new Cell("S1-5k-embed-hit", Cell.Kind.OPEN, "OpenAI embeddings through a cache binding, every request the "
            + "same: hits, against the direct call to the Java mock", 5000, l0, SMALL_BODY, false, false, 512, 0, 512,
            false, null, Dialects.EMBEDDINGS, Dialects.EMBEDDINGS));
        // The same at the size of a real answer (OpenAI's text-embedding-3-small answers 1,536 dimensions by default),
        // at a rate the Java mock serves on its core: at 5,000/s its direct answers queue for seconds.
        add(new Cell("S1-1k-embed-hit-1536", Cell.Kind.OPEN, "S1-5k-embed-hit at 1,000 req/s asking for 1,536 "
            + "dimensions, the size of OpenAI's text-embedding-3-small answers (about 30 KiB of JSON)", 1000, l0,
            SMALL_BODY, false, false, 256, 0, 512, false, null, Dialects.EMBEDDINGS_1536, Dialects.EMBEDDINGS_1536));
        // What a route with targets costs over one exit: a weighted pick between two client bindings to the same mock,
        // and a primary ejected for the whole run, skipped on every request for its priority-1 fallback.
        add(new Cell("S1-5k-targets", Cell.Kind.OPEN, "S1-5k through a route with two weighted targets (3:1), both to the "
            + "mock", 5000, l0, SMALL_BODY, false, false, 512, 0, 512, false, null));
        // S1-5k-targets without its second pool: what the route's pick and bookkeeping cost apart from a second client.
        add(new Cell("S1-5k-targets-one", Cell.Kind.OPEN, "S1-5k through a route with two weighted targets (3:1) on one "
            + "client binding (one upstream pool)", 5000, l0, SMALL_BODY, false, false, 512, 0, 512, false, null));
        add(new Cell("S1-5k-ejected", Cell.Kind.OPEN, "S1-5k through a route whose primary (a refused port) is ejected "
            + "after the first request: every request skips it for the fallback, the mock", 5000, l0, SMALL_BODY, false,
            false, 512, 0, 512, false, null));
        // The Responses API on its same-dialect fast path: it should cost what S1-5k costs.
        add(new Cell("S1-5k-responses", Cell.Kind.OPEN, "OpenAI Responses client → Responses provider (same dialect), "
            + "5,000 req/s, L0, HTTP/1.1", 5000, l0, SMALL_BODY, false, false, 512, 0, 512, true, null,
            Dialects.RESPONSES, Dialects.RESPONSES));
        add(new Cell("S1-h2c", Cell.Kind.OPEN, "OpenAI chat, 5,000 req/s, L0, h2c on both sides (4 connections)", 5000,
            l0, SMALL_BODY, false, true, 4, 0, 512, true, null));
        add(new Cell("S3-stream", Cell.Kind.OPEN, "500 streams/s, LS (first event 200 ms, then 10 × 20 ms), HTTP/1.1",
            500, MockProfile.LS, SMALL_BODY, true, false, 1024, 0, 512, true, null));
        // S3-stream's control, as S1-5k-aa is S1-5k's; with --baseline-dist, a build against another on streams.
        add(new Cell("S3-stream-aa", Cell.Kind.OPEN, "S3-stream paired with itself (--pair): the control of paired "
            + "stream cells, whose cost should read 0", 500, MockProfile.LS, SMALL_BODY, true, false, 1024, 0, 512,
            false, null));
        add(new Cell("S3-stream-cache", Cell.Kind.OPEN, "S3-stream through a cache binding, every stream recorded and "
            + "stored (Cache-Control: no-cache)", 500, MockProfile.LS, SMALL_BODY, true, false, 1024, 0, 512, false, null));
        add(new Cell("S3-stream-targets", Cell.Kind.OPEN, "S3-stream through a route with two weighted targets (3:1), "
            + "both to the mock, each stream held until its first content", 500, MockProfile.LS, SMALL_BODY, true, false,
            1024, 0, 512, false, null));
        add(new Cell("S2-large", Cell.Kind.OPEN, "100 KB prompts, 500 req/s, L0, HTTP/1.1", 500, l0, LARGE_BODY, false,
            false, 256, 0, 512, false, null));
        // The translation cells: the direct run speaks the provider's dialect to the mock.
        add(new Cell("X1-cross", Cell.Kind.OPEN, "OpenAI client → Anthropic provider, 1,000 req/s, L0, HTTP/1.1", 1000,
            l0, SMALL_BODY, false, false, 256, 0, 512, false, null, Dialects.OPENAI, Dialects.ANTHROPIC));
        add(new Cell("X1-cross-rev", Cell.Kind.OPEN, "Anthropic client → OpenAI provider, 1,000 req/s, L0, HTTP/1.1",
            1000, l0, SMALL_BODY, false, false, 256, 0, 512, false, null, Dialects.ANTHROPIC, Dialects.OPENAI));
        add(new Cell("X1-cross-stream", Cell.Kind.OPEN, "OpenAI client → Anthropic provider, 1,000 streams/s, LS",
            1000, MockProfile.LS, SMALL_BODY, true, false, 1024, 0, 1024, false, null, Dialects.OPENAI,
            Dialects.ANTHROPIC));
        add(new Cell("X1-cross-stream-rev", Cell.Kind.OPEN, "Anthropic client → OpenAI provider, 1,000 streams/s, LS",
            1000, MockProfile.LS, SMALL_BODY, true, false, 1024, 0, 1024, false, null, Dialects.ANTHROPIC,
            Dialects.OPENAI));
        add(new Cell("R404", Cell.Kind.REFUSAL, "unknown-model flood, rate ladder, no upstream call", 0, l0, SMALL_BODY,
            false, false, 512, 0, 512, false, null));
        // The same ladder and criteria as R404, through a keys binding (one key) in front of the router.
        add(new Cell("R401", Cell.Kind.REFUSAL, "unknown-key flood, rate ladder, no upstream call", 0, l0, SMALL_BODY,
            false, false, 512, 0, 512, false, null));
        // 3,000 requests in flight need 3,000 upstream HTTP/1.1 connections: the gateway's pool is raised from the
        // default 512, or the pool (not the gateway) would be what this cell measures.
        add(new Cell("L1500-inflight", Cell.Kind.OPEN, "2,000 req/s against L1500: 3,000 in flight, memory and errors",
            2000, MockProfile.fixed(1500), SMALL_BODY, false, false, 4000, 0, 4096, false, null));
        add(new Cell("C64", Cell.Kind.CLOSED, "closed loop, 64 connections, L0: throughput", 0, l0, SMALL_BODY, false,
            false, 64, 64, 512, false, null));
        add(new Cell("SAT", Cell.Kind.SAT, "saturation ladder, L0, HTTP/1.1: highest rate passing", 0, l0, SMALL_BODY,
            false, false, 1024, 0, 512, true, null));
        // How the gateway answers a change of load or a stall, over time (Resilience): the S1-5k request and mock.
        add(new Cell("STEP", Cell.Kind.RESILIENCE, "open loop 3,000 → 5,000 → 8,000 req/s, 20 s each, no warm-up at a new "
            + "rate: per phase and the time until the p99 of half-second runs is back after each step", 3000, l0,
            SMALL_BODY, false, false, 1024, 0, 512, false, null));
        add(new Cell("HICCUP", Cell.Kind.RESILIENCE, "5,000 req/s for 30 s, the gateway stopped (SIGSTOP) for 300 ms at 10 s "
            + "and 600 ms at 20 s: errors, p99, max, time until the p99 of half-second runs is back after each resume",
            5000, l0, SMALL_BODY, false, false, 1024, 0, 512, false, null));
        // HICCUP with the upstream a provider gets by default (h2 over TLS; h2c here): the same clients and load, the
        // gateway's requests multiplexed over a few connections to the mock instead of one connection each.
        add(new Cell("HICCUP-up-h2c", Cell.Kind.RESILIENCE, "HICCUP with the gateway speaking h2c to the mock (clients "
            + "on HTTP/1.1, as HICCUP)", 5000, l0, SMALL_BODY, false, false, 1024, 0, 512, false, null));
        // HICCUP's floor: the harness alone (generator, mock, kernel) after the same stalls, the mock stopped instead.
        add(new Cell("HICCUP-direct", Cell.Kind.RESILIENCE, "HICCUP without the gateway: the generator loads the mock "
            + "directly and the mock's serving process is stopped at the same times", 5000, l0, SMALL_BODY, false, false,
            1024, 0, 512, false, null));
        add(new Cell("COLD-1k", Cell.Kind.RESILIENCE, "a fresh gateway loaded at 1,000 req/s for 10 s from its first 200 "
            + "on /readyz: refusals, errors, p99 over the run and after the first second", 1000, l0, SMALL_BODY, false,
            false, 1024, 0, 512, false, null));
        add(new Cell("COLD-3k", Cell.Kind.RESILIENCE, "COLD-1k at 3,000 req/s", 3000, l0, SMALL_BODY, false, false, 1024, 0,
            512, false, null));
        add(new Cell("OVERLOAD", Cell.Kind.RESILIENCE, "2 × the saturation rate for 30 s, then half of it for 30 s: goodput, "
            + "timeouts vs 503s, recovery against a fresh gateway", 5000, l0, SMALL_BODY, false, false, 1024, 0, 512, false,
            null));
        add(new Cell("IDLE", Cell.Kind.IDLE, "RSS of an idle gateway 5 s after start", 0, l0, SMALL_BODY, false, false,
            0, 0, 512, false, null));
    }

    private Cells()
    {
    }

    private static void add(Cell cell)
    {
        ALL.put(cell.name(), cell);
    }

    /** @return every cell, in the order {@code all} runs them */
    static List<Cell> all()
    {
        return List.copyOf(ALL.values());
    }

    /**
     * @param names cell names (case-insensitive) or {@code all}
     * @return the cells, in the order given, without duplicates
     * @throws IllegalArgumentException naming an unknown cell and the known ones
     */
    static List<Cell> select(List<String> names)
    {
        List<Cell> selected = new ArrayList<>();
        for (String name : names)
        {
            if (name.equalsIgnoreCase("all"))
            {
                for (Cell c : ALL.values())
                {
                    if (!selected.contains(c))
                        selected.add(c);
                }
                continue;
            }
            Cell cell = null;
            for (Cell c : ALL.values())
            {
                if (c.name().toLowerCase(Locale.ROOT).equals(name.toLowerCase(Locale.ROOT)))
                    cell = c;
            }
            if (cell == null)
                throw new IllegalArgumentException("cell: " + name + " (expected: all or one of " +
                    String.join(", ", ALL.keySet()) + ")");
            if (!selected.contains(cell))
                selected.add(cell);
        }
        return selected;
    }

    /**
     * The cell whose gateway config is {@code cell}'s without what the cell measures: what {@code --pair} runs next to
     * it, in the same window, to measure what that costs. The S1-5k plugin cells and the S1-5k route cells have S1-5k
     * (no cache, no log or metrics, no keys, limits or guard, one exit instead of targets; the same load, mock and
     * upstream pool); S3-stream-targets has S3-stream.
     *
     * @param cell a cell
     * @return its baseline, or null when it has none (it then runs as usual under {@code --pair})
     */
    static Cell baseline(Cell cell)
    {
        return switch (cell.name())
        {
            case "S1-5k-aa", "S1-5k-obs", "S1-5k-cache-miss", "S1-5k-cache-hit", "S1-5k-guard", "S1-5k-targets",
                 "S1-5k-targets-one", "S1-5k-ejected" ->
                ALL.get("S1-5k");
            case "S3-stream-aa", "S3-stream-targets" -> ALL.get("S3-stream");
            case "S1-5k-limits" -> ALL.get("S1-5k");
            case "S1-5k-limits-redis" -> ALL.get("S1-5k-limits");
            case "S1-1k-limits" -> ALL.get("S1-1k");
            case "S1-1k-limits-redis" -> ALL.get("S1-1k-limits");
            default -> null;
        };
    }

    /** @return the SHA-256 of {@code key}'s UTF-8 bytes in lower-case hex: how a keys binding stores a key */
    static String sha256Hex(String key)
    {
        try
        {
            return java.util.HexFormat.of().formatHex(java.security.MessageDigest.getInstance("SHA-256")
                .digest(key.getBytes(java.nio.charset.StandardCharsets.UTF_8)));
        }
        catch (java.security.NoSuchAlgorithmException x)
        {
            throw new IllegalStateException("every Java runtime has SHA-256", x);
        }
    }
}
