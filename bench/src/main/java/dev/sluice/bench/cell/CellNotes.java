package dev.sluice.bench.cell;

import java.io.IOException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What a cell's report says about how it ran, before any figure: its spec table (load, mock, protocol, body, JVM
 * flags, warm-up and window) and its notes (which mock, which references were missing, pinning, pass criteria,
 * routes, {@code --pair}).
 */
final class CellNotes
{
    private final Session session;

    /**
     * @param session the resolved environment: the options, the references found, pinning
     */
    CellNotes(Session session)
    {
        this.session = session;
    }

    /** Adds the note saying which mock serves the cell and why. */
    void mockNote(Cell cell, boolean nginx, List<String> notes)
    {
        BenchOptions o = session.options();
        if (nginx)
            notes.add("mock: the static nginx mock (--mock " + o.mock() + "): one worker" +
                (session.pinning().enabled() ? " on core " + Pinning.HARNESS_CPUS : "") + ", answering the Java " +
                "mock's bytes for this cell's request (request id per connection, not per mock)");
        else if (MockProcess.JAVA.equals(o.mock()) || cell.kind() == Cell.Kind.IDLE || cell.kind() == Cell.Kind.SKIPPED)
            notes.add("mock: the Java MockProvider" + (MockProcess.JAVA.equals(o.mock()) ? " (--mock java)" : ""));
        else if (MockProcess.needsJava(cell) != null)
            notes.add("mock: the Java MockProvider (this cell needs " + MockProcess.needsJava(cell) + ")");
        else
            notes.add("mock: the Java MockProvider (nginx is not installed)");
    }

    /** Adds the notes on how the cell runs: the target, missing references, pinning, routes, pass criteria, pairing. */
    void notesFor(Cell cell, List<String> notes)
    {
        BenchOptions o = session.options();
        if (o.targetUrl() != null)
            notes.add("gateway = " + o.targetUrl() + " (an external process, not restarted per repetition)");
        if (cell.nginx() && session.nginxBinary() == null)
            notes.add("nginx unavailable: no byte-pipe figures for this cell");
        if (cell.nginx() && session.nginxBinary() != null && cell.h2c())
            notes.add("nginx does not speak h2c to an upstream: its run here is HTTP/1.1 on both sides, so it is " +
                "the HTTP/1.1 floor, not an h2c one");
        if (cell.nginx() && o.haproxy() && session.haproxyBinary() == null)
            notes.add("HAProxy unavailable: no HAProxy byte-pipe figures for this cell");
        if (cell.nginx() && session.haproxyBinary() != null && cell.h2c())
            notes.add("HAProxy and the Jetty proxy speak h2c on both sides here (HAProxy: h2c preface detected on its " +
                "bind, `proto h2` to the mock; Jetty: HTTP/2 prior-knowledge client transport)");
        if (session.pinning().enabled() && cell.kind() != Cell.Kind.IDLE)
            notes.add("pinned: each target on core " + Pinning.TARGET_CPUS + " (JVMs with -XX:ActiveProcessorCount=" +
                Pinning.TARGET_ACTIVE_PROCESSORS + "), mock and generator on core " + Pinning.HARNESS_CPUS + "; each " +
                "target JVM had " + o.jvmWarmup().toSeconds() + " s of load (closed-loop priming, then open loop at " +
                "the cell's rate) before its window");
        if (o.upstreamPool() > 0)
            notes.add("the gateway's upstream pool is " + o.upstreamPool() + " connections (--upstream-pool; the cell's "
                + "own is " + cell.upstreamMaxConnections() + ")");
        else if (cell.upstreamMaxConnections() != 512)
            notes.add("the gateway's upstream pool is " + cell.upstreamMaxConnections() + " connections (not 512): " +
                "every request in flight needs its own HTTP/1.1 connection to the mock");
        routeNotes(cell, cell.upstreamMaxConnections(o), notes);
        if (cell.kind() == Cell.Kind.REFUSAL)
            notes.add("success = a " + cell.refusalStatus() + " answer (" + (cell.virtualKeys()
                ? "the unknown key is rejected by a keys binding holding one key, in front of the router"
                : "the unknown model is rejected by the router") + "); the direct run sends the same requests to the mock, " +
                "which answers them: a step passes when every request got the refusal, none reached the provider, and " +
                "the p99 is at most 1 ms over the direct run's at that rate (the harness's own p99)");
        if (cell.kind() == Cell.Kind.SAT)
            notes.add("a step passes when achieved ≥ 99.5% of offered, errors ≤ 0.01% and p99 overhead over the direct " +
                "run of the same step ≤ 5 ms; the saturation rate is the highest passing step (a lower bound at the " +
                "ladder's resolution)");
        if (cell.kind() == Cell.Kind.CLOSED)
            notes.add("closed loop: latencies are per request with no schedule (lateness does not apply)");
        if (o.pair())
            pairNotes(cell, notes);
    }

    private static void routeNotes(Cell cell, int pool, List<String> notes)
    {
        switch (cell.route())
        {
            case WEIGHTED_TARGETS -> notes.add("route: two targets, `south` (weight 3) and `south_b` (weight 1), client " +
                "bindings with the same options to the mock, each with its own upstream pool of " +
                pool + " connections" + (cell.stream() ? "; each stream held until its first " +
                "content (`stream: { commit: first_content }`)" : ""));
            case WEIGHTED_ONE_CLIENT -> notes.add("route: two targets on one client binding, `south` (weights 3 and 1), "
                + "one upstream pool of " + pool + " connections");
            case EJECTED_PRIMARY -> notes.add("route: `south_down` (priority 0) to 127.0.0.1:" + Ports.refused() +
                ", a port the bench holds bound and never listens on (every connection refused), and `south` " +
                "(priority 1) to the mock; `eject: { consecutive: 1, base: 5m, max: 5m }`, `retry: { attempts: 2 }`: " +
                "the priming's first requests eject the primary (those sent before the first refusal came back try " +
                "it too), and every later request skips it without a connection attempt. A gateway living longer than " +
                "5 minutes (a --jvm-warmup of about 4 minutes or more) would let one request probe it again");
            default ->
            {
                // One exit: nothing to say.
            }
        }
    }

    private void pairNotes(Cell cell, List<String> notes)
    {
        Cell baseline = Cells.baseline(cell);
        if (baseline == null)
            notes.add("--pair does not apply: this cell has no baseline config; it ran as usual");
        else if (session.options().targetUrl() != null)
            notes.add("--pair ignored: --target-url measures one external gateway; the cell ran as usual");
        else
            notes.add("paired (--pair): every repetition ran `gateway` (this cell's config) and `baseline` (" +
                baseline.name() + "'s config) as two processes" + (session.pinning().enabled() ? " on core " +
                Pinning.TARGET_CPUS : "") + ", primed in turn, then loaded together (the same warm-up and window) at " +
                Fmt.rate(cell.rate() / 2) + " and " + cell.connections() / 2 + " connections each, the same request " +
                "to both, their schedules interleaved; the direct run at " + Fmt.rate(cell.rate()) + "; no evidence " +
                "spans in pair mode (--evidence does not apply to it)");
    }

    /** @return the cell's spec line, in the order the report shows it */
    Map<String, Object> spec(Cell cell)
    {
        BenchOptions o = session.options();
        Map<String, Object> spec = new LinkedHashMap<>();
        switch (cell.kind())
        {
            case OPEN -> spec.put("rate", Fmt.rate(cell.rate()) + " (open loop)");
            case CLOSED -> spec.put("workers", cell.workers() + " (closed loop)");
            case SAT -> spec.put("ladder", Cells.SAT_LADDER.stream().map(Fmt::rate).toList().toString());
            case REFUSAL -> spec.put("ladder", Cells.R404_LADDER.stream().map(Fmt::rate).toList().toString());
            default ->
            {
                // IDLE and skipped cells have no load.
            }
        }
        if (cell.kind() == Cell.Kind.SKIPPED || cell.kind() == Cell.Kind.IDLE)
        {
            spec.put("reps", o.reps());
            return spec;
        }
        spec.put("mock", cell.mock().name());
        spec.put("protocol", cell.protocol());
        spec.put("body", cell.bodyBytes() >= 1024 ? cell.bodyBytes() / 1024 + " KiB" : cell.bodyBytes() + " B");
        spec.put("stream", cell.stream());
        spec.put("connections", cell.connections());
        if (CellRunner.paired(session.options(), cell))
            spec.put("pair", "gateway + baseline (" + Cells.baseline(cell).name() + "'s config), " + Fmt.rate(cell.rate() / 2) +
                " and " + cell.connections() / 2 + " connections each, same window");
        spec.put("upstream pool", cell.upstreamMaxConnections(o));
        if (o.targetUrl() == null)
            spec.put("gateway JVM", gatewayJvmFlags());
        if (o.targetUrl() == null && !o.gatewayWarmup().isEmpty())
            spec.put("gateway warm-up", "`" + o.gatewayWarmup() + "` (--gateway-warmup)");
        if (o.targetUrl() == null && !o.gatewayAdmission().isEmpty())
            spec.put("gateway admission", "`" + o.gatewayAdmission() + "` (--gateway-admission)");
        boolean ladder = cell.kind() == Cell.Kind.SAT || cell.kind() == Cell.Kind.REFUSAL;
        spec.put("warm-up", (ladder ? o.stepWarmup() : o.warmup()).toMillis() / 1000.0 + " s");
        spec.put("window", (ladder ? o.stepWindow() : o.window()).toMillis() / 1000.0 + " s");
        spec.put("reps", o.reps());
        return spec;
    }

    /**
     * @return the JVM flags every gateway process gets, as a report names them: the distribution's defaults (or
     * {@code --gateway-jvm}'s flags instead) and {@code --gateway-jvm-add}'s; the GC log and pinning flags left out
     */
    String gatewayJvmFlags()
    {
        BenchOptions o = session.options();
        String base;
        if (o.gatewayJvm() != null)
            base = "`" + o.gatewayJvm() + "` (--gateway-jvm, instead of the defaults)";
        else
        {
            try
            {
                base = "`" + String.join(" ", DistFlags.read(o.dist())) + "` (the distribution's defaults)";
            }
            catch (IOException x)
            {
                base = "the distribution's defaults (" + x.getMessage() + ")";
            }
        }
        return o.gatewayJvmAdd().isEmpty() ? base : base + " + `" + o.gatewayJvmAdd() + "` (--gateway-jvm-add)";
    }
}
