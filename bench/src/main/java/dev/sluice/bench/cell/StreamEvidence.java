package dev.sluice.bench.cell;

import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

import dev.sluice.bench.load.JettyLoadGenerator;
import dev.sluice.bench.load.LoadResult;
import dev.sluice.bench.load.LoadSpec;
import dev.sluice.mock.MockProvider;

/**
 * Per-stream and per-event counts of the gateway's stream relay that do not depend on how busy the machine is: system
 * calls by type, context switches by thread, and bytes allocated, each over a bounded number of streams.
 *
 * <pre>
 * java -cp 'bench/target/classes:bench/target/lib/*' dev.sluice.bench.cell.StreamEvidence \
 *     [--streams 1000] [--rate 250] [--warmup-streams 3000] [--no-pin] [--dir bench/target/stream-evidence] \
 *     [--trace 10] [--alloc-sites] [--dist gateway-runtime/target/sluice]
 * </pre>
 *
 * <p>The gateway is started from the distribution ({@code gateway-runtime/target/sluice}) with S3-stream's config
 * (OpenAI to OpenAI, HTTP/1.1 on both sides, route {@code *}) to an in-process {@link MockProvider} streaming the LS
 * profile (first event after 200 ms, then one every 20 ms). After a warm-up, three phases each send exactly
 * {@code --streams} streams at {@code --rate} and wait for all of them to end, so every count covers whole streams:</p>
 * <ol>
 *   <li>context switches: {@code voluntary_ctxt_switches + nonvoluntary_ctxt_switches} of every
 *   {@code /proc/PID/task/TID/status}, before and after, per thread name (digits folded, so a pool's workers are one
 *   row);</li>
 *   <li>system calls: {@code strace -f -c} attached to the gateway for the phase;</li>
 *   <li>allocation: a JFR recording of {@code jdk.ThreadAllocationStatistics} only ({@link JfrAllocation}).</li>
 * </ol>
 * <p>With {@code --trace N}, a last phase writes every system call of {@code N} streams (sent 50 ms apart) with
 * thread ids and times to {@code trace.txt}: which thread reads an upstream chunk and which writes it to the client.</p>
 * <p>With {@code --alloc-sites}, a phase samples allocations ({@code jdk.ObjectAllocationSample}) and prints the top
 * sites. {@code --dist} measures another build of the distribution (a copy made before a change).</p>
 * <p>Counts are divided by the streams that succeeded, and by the events of a stream (as the generator saw them) for
 * the per-event figures. Everything listens on 127.0.0.1; the gateway and the mock stop when it ends.</p>
 */
public final class StreamEvidence
{
    private StreamEvidence()
    {
    }

    /**
     * @param args the options above
     * @throws Exception if the run fails
     */
    public static void main(String[] args) throws Exception
    {
        int streams = 1_000;
        double rate = 250;
        int warmupStreams = 3_000;
        boolean pin = true;
        int trace = 0;
        boolean sites = false;
        Path dist = Path.of("gateway-runtime/target/sluice");
        Path dir = Path.of("bench/target/stream-evidence");
        for (int i = 0; i < args.length; i++)
        {
            switch (args[i])
            {
                case "--streams" -> streams = Integer.parseInt(args[++i]);
                case "--rate" -> rate = Double.parseDouble(args[++i]);
                case "--warmup-streams" -> warmupStreams = Integer.parseInt(args[++i]);
                case "--no-pin" -> pin = false;
                case "--dir" -> dir = Path.of(args[++i]);
                case "--dist" -> dist = Path.of(args[++i]);
                case "--trace" -> trace = Integer.parseInt(args[++i]);
                case "--alloc-sites" -> sites = true;
                default ->
                {
                    System.err.println("usage: StreamEvidence [--streams N] [--rate R] [--warmup-streams N] [--no-pin] [--dir D] [--dist D] [--trace N] [--alloc-sites]");
                    System.exit(2);
                }
            }
        }
        Files.createDirectories(dir);
        Pinning pinning = new Pinning(pin && ProcFs.onlineCpus() >= 2);
        MockProfile ls = MockProfile.LS;
        try (MockProvider mock = MockProvider.builder()
            .streamProfile(Duration.ofMillis(ls.firstEventMillis()), Duration.ofMillis(ls.intervalMillis()), ls.events())
            .idleTimeout(Duration.ofHours(1)).recordLimit(1).start())
        {
            int port = Ports.free();
            Path config = dir.resolve("gateway.yaml").toAbsolutePath();
            Files.writeString(config, GatewayConfigs.yaml(port, mock.port(), false, 512, true, -1), StandardCharsets.UTF_8);
            try (GatewayProcess gateway = GatewayProcess.start("gateway", dist, config, port, -1,
                dir.resolve("gc.log").toAbsolutePath(), dir.resolve("gateway.log").toAbsolutePath(), pinning))
            {
                URI url = gateway.chatUri();
                System.out.printf(Locale.ROOT, "gateway pid %d, pinned %s, %d streams per phase at %.0f/s, warm-up %d%n",
                    gateway.process().pid(), pinning.enabled(), streams, rate, warmupStreams);
                if (warmupStreams > 0)
                    load(url, warmupStreams, rate);

                ProcessHandle handle = gateway.process().handle();
                Map<String, Long> ctx0 = switchesByThread(handle);
                LoadResult r = load(url, streams, rate);
                Map<String, Long> ctx1 = switchesByThread(handle);
                double events = eventsPerStream(r);
                System.out.printf(Locale.ROOT, "%nstreams %d ok of %d, %.2f events per stream%n", r.succeeded(), r.offered(), events);
                printSwitches(ctx0, ctx1, r.succeeded(), events);

                r = straced(gateway, dir, url, streams, rate, events);
                r = allocation(gateway, dir, url, streams, rate, events);
                if (sites)
                    allocationSites(gateway, dir, url, streams, rate, events);
                if (trace > 0)
                    trace(gateway, dir, url, trace);
            }
        }
    }

    private static LoadResult load(URI url, int streams, double rate) throws Exception
    {
        byte[] body = ("{\"model\":\"bench-model\",\"messages\":[{\"role\":\"user\",\"content\":\"Say hello.\"}]," +
            "\"stream\":true}").getBytes(StandardCharsets.UTF_8);
        LoadSpec spec = new LoadSpec(url, "POST", Map.of("Content-Type", "application/json"), body, true, false, 512,
            rate, 0, Duration.ZERO, Duration.ofMillis(Math.round(streams * 1_000 / rate)), Duration.ofSeconds(10));
        LoadResult r = new JettyLoadGenerator().run(spec);
        r.errors().forEach((error, count) ->
        {
            if (count > 0)
                System.out.printf(Locale.ROOT, "  (%d streams failed: %s)%n", count, error);
        });
        return r;
    }

    private static double eventsPerStream(LoadResult r)
    {
        return r.succeeded() == 0 ? 0 : 1 + (double)r.gaps().getTotalCount() / r.succeeded();
    }

    /** Context switches per thread, keyed by the thread's name with digits folded to {@code #}. */
    private static Map<String, Long> switchesByThread(ProcessHandle process) throws IOException
    {
        Map<String, Long> byName = new TreeMap<>();
        Path tasks = Path.of("/proc", Long.toString(process.pid()), "task");
        String[] tids = tasks.toFile().list();
        if (tids == null)
            return byName;
        for (String tid : tids)
        {
            String status;
            try
            {
                status = Files.readString(tasks.resolve(tid).resolve("status"));
            }
            catch (IOException x)
            {
                continue;
            }
            String name = "?";
            for (String line : status.split("\n"))
            {
                if (line.startsWith("Name:"))
                    name = line.substring(5).trim().replaceAll("[0-9]+", "#");
            }
            byName.merge(name, ProcFs.contextSwitches(status), Long::sum);
        }
        return byName;
    }

    private static void printSwitches(Map<String, Long> before, Map<String, Long> after, long streams, double events)
    {
        long total = 0;
        List<String> rows = new ArrayList<>();
        for (Map.Entry<String, Long> e : after.entrySet())
        {
            long d = e.getValue() - before.getOrDefault(e.getKey(), 0L);
            total += d;
            if (d > 0)
                rows.add(String.format(Locale.ROOT, "  %-18s %8.2f /stream %6.3f /event", e.getKey(), (double)d / streams,
                    (double)d / streams / events));
        }
        System.out.printf(Locale.ROOT, "context switches   %8.2f /stream %6.3f /event (by thread:)%n", (double)total / streams,
            (double)total / streams / events);
        rows.forEach(System.out::println);
    }

    private static LoadResult straced(GatewayProcess gateway, Path dir, URI url, int streams, double rate, double events)
        throws Exception
    {
        Path out = dir.resolve("strace.txt").toAbsolutePath();
        Path err = dir.resolve("strace.log").toAbsolutePath();
        Files.deleteIfExists(out);
        Process strace = new ProcessBuilder("strace", "-c", "-f", "-o", out.toString(), "-p",
            Long.toString(gateway.process().pid())).redirectErrorStream(true).redirectOutput(err.toFile()).start();
        // strace says "attached" per thread on stderr: start the load once it has.
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (System.nanoTime() < deadline && (!Files.exists(err) || !Files.readString(err).contains("attached")))
            Thread.sleep(50);
        Thread.sleep(300);
        LoadResult r = load(url, streams, rate);
        strace.destroy();
        if (!strace.waitFor(10, TimeUnit.SECONDS))
        {
            strace.destroyForcibly();
            System.out.println("syscalls: strace did not detach");
            return r;
        }
        StraceSummary summary = StraceSummary.parse(Files.readString(out, StandardCharsets.UTF_8));
        long n = r.succeeded();
        System.out.printf(Locale.ROOT, "%nsyscalls (%d streams ok) %8.2f /stream %6.3f /event%n", n, (double)summary.total() / n,
            (double)summary.total() / n / events);
        summary.calls().forEach((name, calls) ->
        {
            if ((double)calls / n >= 0.01)
                System.out.printf(Locale.ROOT, "  %-18s %8.2f /stream %6.3f /event%n", name, (double)calls / n,
                    (double)calls / n / events);
        });
        return r;
    }

    private static LoadResult allocation(GatewayProcess gateway, Path dir, URI url, int streams, double rate, double events)
        throws Exception
    {
        long pid = gateway.process().pid();
        Path settings = dir.resolve("alloc.jfc").toAbsolutePath();
        Path file = dir.resolve("alloc.jfr").toAbsolutePath();
        Files.writeString(settings, JfrAllocation.SETTINGS, StandardCharsets.UTF_8);
        Files.deleteIfExists(file);
        jcmd(pid, "JFR.start", "name=stream-alloc", "settings=" + settings);
        LoadResult r = load(url, streams, rate);
        jcmd(pid, "JFR.stop", "name=stream-alloc", "filename=" + file);
        long bytes = JfrAllocation.allocated(JfrAllocation.read(file));
        long n = r.succeeded();
        System.out.printf(Locale.ROOT, "%nallocated (%d streams ok) %8.0f B/stream %8.0f B/event%n", n, (double)bytes / n,
            (double)bytes / n / events);
        return r;
    }

    /**
     * Where the bytes are allocated: a JFR recording of {@code jdk.ObjectAllocationSample} (throttled to 10,000
     * samples a second, each weighted by the bytes it stands for), summed by allocated class and the first frame
     * outside {@code java.}/{@code jdk.}/{@code sun.}, top 25. Sampled, so an estimate; the total is the exact figure.
     */
    private static void allocationSites(GatewayProcess gateway, Path dir, URI url, int streams, double rate, double events)
        throws Exception
    {
        long pid = gateway.process().pid();
        Path settings = dir.resolve("sites.jfc").toAbsolutePath();
        Path file = dir.resolve("sites.jfr").toAbsolutePath();
        Files.writeString(settings, """
            <?xml version="1.0" encoding="UTF-8"?>
            <configuration version="2.0" label="stream-sites" description="jdk.ObjectAllocationSample only">
              <event name="jdk.ObjectAllocationSample">
                <setting name="enabled">true</setting>
                <setting name="throttle">10000/s</setting>
                <setting name="stackTrace">true</setting>
              </event>
            </configuration>
            """, StandardCharsets.UTF_8);
        Files.deleteIfExists(file);
        jcmd(pid, "JFR.start", "name=stream-sites", "settings=" + settings);
        LoadResult r = load(url, streams, rate);
        jcmd(pid, "JFR.stop", "name=stream-sites", "filename=" + file);
        Map<String, Long> bySite = new java.util.HashMap<>();
        for (jdk.jfr.consumer.RecordedEvent e : jdk.jfr.consumer.RecordingFile.readAllEvents(file))
        {
            if (!"jdk.ObjectAllocationSample".equals(e.getEventType().getName()))
                continue;
            String type = e.getClass("objectClass").getName();
            String site = "?";
            jdk.jfr.consumer.RecordedStackTrace stack = e.getStackTrace();
            if (stack != null)
            {
                for (jdk.jfr.consumer.RecordedFrame f : stack.getFrames())
                {
                    String owner = f.getMethod().getType().getName();
                    if (owner.startsWith("java.") || owner.startsWith("jdk.") || owner.startsWith("sun."))
                        continue;
                    site = owner.substring(owner.lastIndexOf('.') + 1) + "." + f.getMethod().getName() + ":" + f.getLineNumber();
                    break;
                }
            }
            bySite.merge(type + " @ " + site, e.getLong("weight"), Long::sum);
        }
        long n = r.succeeded();
        System.out.printf(Locale.ROOT, "%nallocation sites (sampled, %d streams ok), B/stream:%n", n);
        bySite.entrySet().stream().sorted(Map.Entry.<String, Long>comparingByValue().reversed()).limit(25)
            .forEach(e -> System.out.printf(Locale.ROOT, "  %8.0f  %s%n", (double)e.getValue() / n, e.getKey()));
    }

    /** Writes every system call of the relay, with thread ids and times, for {@code streams} streams sent 50 ms apart. */
    private static void trace(GatewayProcess gateway, Path dir, URI url, int streams) throws Exception
    {
        Path out = dir.resolve("trace.txt").toAbsolutePath();
        Path err = dir.resolve("trace.log").toAbsolutePath();
        Process strace = new ProcessBuilder("strace", "-f", "-tt", "-s", "0", "-e", "trace=!gettid,getrusage,clock_gettime",
            "-o", out.toString(), "-p", Long.toString(gateway.process().pid())).redirectErrorStream(true)
            .redirectOutput(err.toFile()).start();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (System.nanoTime() < deadline && (!Files.exists(err) || !Files.readString(err).contains("attached")))
            Thread.sleep(50);
        Thread.sleep(300);
        load(url, streams, 20);
        strace.destroy();
        if (!strace.waitFor(10, TimeUnit.SECONDS))
            strace.destroyForcibly();
        System.out.printf(Locale.ROOT, "%ntrace of %d streams: %s%n", streams, out);
    }

    private static void jcmd(long pid, String... args) throws Exception
    {
        List<String> command = new ArrayList<>(List.of("jcmd", Long.toString(pid)));
        command.addAll(List.of(args));
        Process p = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        if (!p.waitFor(30, TimeUnit.SECONDS))
        {
            p.destroyForcibly();
            throw new IOException("jcmd " + String.join(" ", args) + " did not return within 30 s");
        }
    }
}
