package dev.sluice.bench.load;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.function.Predicate;

/**
 * The load generator: open loop (a fixed schedule, latency from each request's scheduled time, so no coordinated
 * omission) or closed loop, HTTP/1.1 or h2c, plain or SSE responses.
 *
 * <p>Each {@link #run(LoadSpec)} opens its own connections and closes them before returning. HTTP/1.1 uses the
 * generator's own lean transport (the request encoded once, written by the sending thread, responses parsed by
 * one I/O thread with Jetty's {@code HttpParser}; no cookies, redirects, decoding or {@code User-Agent}) and opens
 * at most {@link LoadSpec#connections()} connections (1024 when 0) as the schedule needs them; requests beyond wait
 * in a queue and are still measured from their schedule. h2c opens streams straight on Jetty's HTTP/2 sessions
 * (no {@code HttpClient}): that many connections (1 when 0) opened up front, requests spread over them round
 * robin up to the server's stream limit, then queued.</p>
 *
 * <p>What it measures, all over the requests due inside the window: latency from the schedule to the last byte of
 * every response read to the end, whatever its status; how late each request left (the generator's own health);
 * for streams, time to the first event and the gaps between events (events are found by their blank line, on the
 * raw bytes); outcomes by {@link LoadSpec#ERROR_CLASSES error class}; the process CPU time during the window.
 * A stream succeeds when it answered 200, ended cleanly, and its last event passes the end-marker predicate.</p>
 *
 * <p>Thread-safe: runs do not share state, though running two at once makes them compete for the CPU.
 * {@link #runTogether(List)} runs several specs at once on one interleaved schedule.</p>
 *
 * <pre>{@code
 * LoadSpec spec = new LoadSpec(URI.create("http://127.0.0.1:8080/v1/chat/completions"), "POST",
 *     Map.of("content-type", "application/json"), body, false, false, 64, 5_000, 0,
 *     Duration.ofSeconds(5), Duration.ofSeconds(20), Duration.ofSeconds(10));
 * LoadResult result = new JettyLoadGenerator().run(spec);
 * long p99 = result.latency().getValueAtPercentile(99);
 * }</pre>
 */
public final class JettyLoadGenerator implements LoadGenerator
{
    /**
     * The default end-marker check, applied to the last event of a stream: OpenAI's {@code data: [DONE]} or
     * Anthropic's {@code message_stop} event.
     */
    public static final Predicate<String> DEFAULT_STREAM_END =
        event -> event.contains("[DONE]") || event.contains("message_stop");

    private final Predicate<String> streamEnd;
    private final long spinNanos;
    private final boolean jettyClient;

    /** A generator that recognizes OpenAI and Anthropic stream ends. */
    public JettyLoadGenerator()
    {
        this(DEFAULT_STREAM_END);
    }

    /**
     * @param streamEnd tells whether the last event of a stream (its first 512 bytes, as text, lines joined by
     * {@code \n}, comments left out) is a clean end; called once per stream, from a client thread
     */
    public JettyLoadGenerator(Predicate<String> streamEnd)
    {
        this(streamEnd, Pacer.DEFAULT_SPIN_NANOS);
    }

    /**
     * @param streamEnd see {@link #JettyLoadGenerator(Predicate)}
     * @param spinNanos the scheduler busy-waits for a request due at most this far ahead, and parks otherwise
     * (default 0, never): larger values make requests leave a few tens of µs closer to their schedule, for the CPU
     * the spinning takes from everything else on the machine
     */
    public JettyLoadGenerator(Predicate<String> streamEnd, long spinNanos)
    {
        this(streamEnd, spinNanos, false);
    }

    /**
     * @param streamEnd see {@link #JettyLoadGenerator(Predicate)}
     * @param spinNanos see {@link #JettyLoadGenerator(Predicate, long)}
     * @param jettyClient send with Jetty's {@code HttpClient} instead of the generator's own transports (several
     * times the CPU per request): to compare the two
     */
    public JettyLoadGenerator(Predicate<String> streamEnd, long spinNanos, boolean jettyClient)
    {
        this.streamEnd = Objects.requireNonNull(streamEnd, "streamEnd");
        if (spinNanos < 0)
            throw new IllegalArgumentException("spinNanos: " + spinNanos + " (expected: >= 0)");
        this.spinNanos = spinNanos;
        this.jettyClient = jettyClient;
    }

    /**
     * Runs {@code spec} and blocks until its window is over and every measured request ended or was given up on,
     * at the latest about warm-up + window + timeout after the start.
     *
     * @throws IllegalStateException if the generator itself failed (the spec's requests cannot be built)
     * @throws InterruptedException if interrupted; the run is stopped
     */
    @Override
    public LoadResult run(LoadSpec spec) throws Exception
    {
        return new LoadRun(spec, streamEnd, spinNanos, jettyClient).execute();
    }

    /**
     * Runs open-loop specs at the same time, each with its own connections, tally and scheduler thread (as if each
     * had its own {@link #run(LoadSpec)}), on one staggered schedule: every run's connections are set up first, then
     * from one common start instant run {@code i} of {@code n} is offset by {@code i × interval / n}. The generator's
     * CPU in each result is this process's, so it covers all the runs.
     *
     * @throws IllegalArgumentException if {@code specs} is empty or holds a closed loop
     * @throws IllegalStateException naming the run that failed, if one did
     * @throws InterruptedException if interrupted; every run is stopped
     */
    @Override
    public List<LoadResult> runTogether(List<LoadSpec> specs) throws Exception
    {
        if (specs.isEmpty())
            throw new IllegalArgumentException("specs: none (expected: at least one open-loop spec)");
        List<LoadRun> runs = new ArrayList<>(specs.size());
        for (int i = 0; i < specs.size(); i++)
        {
            LoadSpec spec = specs.get(i);
            if (spec.closedLoopWorkers() > 0)
                throw new IllegalArgumentException("specs[" + i + "]: a closed loop of " + spec.closedLoopWorkers() +
                    " workers (expected: open loop; a closed loop has no schedule to stagger)");
            runs.add(new LoadRun(spec, streamEnd, spinNanos, jettyClient));
        }
        return LoadRun.together(runs);
    }

    /**
     * Runs {@code spec}'s warm-up at its rate, then the phases, on one scheduler thread and one
     * transport, as {@link #run(LoadSpec)} runs one rate; see {@link LoadGenerator#runPhased}.
     *
     * @throws IllegalArgumentException if {@code spec} is a closed loop or there is no phase
     * @throws InterruptedException if interrupted; the run is stopped
     */
    @Override
    public LoadResult runPhased(LoadSpec spec, List<Phase> phases, Timeline timeline) throws Exception
    {
        Objects.requireNonNull(timeline, "timeline");
        if (spec.closedLoopWorkers() > 0)
            throw new IllegalArgumentException("spec: a closed loop of " + spec.closedLoopWorkers() +
                " workers (expected: open loop)");
        if (phases.isEmpty())
            throw new IllegalArgumentException("phases: none (expected: at least one)");
        return new LoadRun(spec, streamEnd, spinNanos, jettyClient, List.copyOf(phases),
            timeline).execute();
    }
}
