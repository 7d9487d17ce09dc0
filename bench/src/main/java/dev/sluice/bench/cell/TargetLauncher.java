package dev.sluice.bench.cell;

import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import dev.sluice.bench.load.LoadSpec;

import static dev.sluice.bench.cell.LoadSpecs.http11;
import static dev.sluice.bench.cell.LoadSpecs.loadSpec;

/**
 * Starts the processes of a cell: its mock (the Java mock, or the static nginx mock), a fresh gateway per repetition
 * with its config, GC log and logs named after the cell and repetition, and the byte-pipe references (nginx, HAProxy,
 * the Jetty proxy); and makes the probe that watches a target from {@code /proc}.
 */
final class TargetLauncher
{
    private final Session session;

    /**
     * @param session the resolved environment: executables, the distribution, the raw directory, pinning
     */
    TargetLauncher(Session session)
    {
        this.session = session;
    }

    /**
     * Starts the cell's mock: the Java mock in its own JVM, or the static nginx mock answering the direct run's request.
     *
     * @param port the port to listen on
     * @param nginx whether it is the nginx mock ({@link MockProcess#usesNginx})
     */
    MockProcess startMock(Cell cell, int port, boolean nginx) throws IOException
    {
        if (!nginx)
            return MockProcess.start(session.java(), session.classpath(), port, cell.mock(),
                session.raw().resolve("logs/mock-" + cell.name() + ".log"), session.pinning());
        // The request it answers is the direct run's: the same path, headers and body the gateway forwards.
        LoadSpec direct = loadSpec(cell, cell.provider(), Math.max(1, cell.rate()), Cells.MODEL,
            URI.create("http://127.0.0.1:" + port + Dialects.path(cell.provider())), cell.h2c(), cell.connections(),
            Duration.ZERO, Duration.ofSeconds(1));
        return MockProcess.startNginx(session.nginxMockBinary(), session.raw().resolve("nginx-mock/" + cell.name()), port,
            cell, direct, session.pinning());
    }

    /**
     * @param cell a cell
     * @return the references measured next to the gateway in it, in the order they run
     */
    List<String> references(Cell cell)
    {
        List<String> refs = new ArrayList<>();
        if (!cell.nginx())
            return refs;
        if (session.nginxBinary() != null)
            refs.add("nginx");
        if (session.haproxyBinary() != null)
            refs.add("haproxy");
        if (session.options().jettyProxy())
            refs.add("jetty-proxy");
        return refs;
    }

    /** nginx speaks HTTP/1.1 to its upstream: an h2c cell measures it over HTTP/1.1 on both sides. */
    static LoadSpec referenceSpec(String ref, LoadSpec spec)
    {
        return "nginx".equals(ref) && spec.h2c() ? http11(spec, 512) : spec;
    }

    /**
     * Starts a fresh byte-pipe reference for a repetition, forwarding to the mock.
     *
     * @param ref {@code nginx}, {@code haproxy} or {@code jetty-proxy}, as {@link #references} names them
     */
    TargetProcess startReference(String ref, Cell cell, int rep, MockProcess mock) throws IOException
    {
        return switch (ref)
        {
            case "nginx" -> startNginx(cell, rep, mock);
            case "haproxy" -> HaproxyProcess.start(session.haproxyBinary(), session.raw().resolve("haproxy-" + cell.name() +
                "-r" + rep), Ports.free(), mock.port(), cell.h2c(), session.pinning());
            case "jetty-proxy" -> JettyProxyProcess.start(session.java(), session.classpath(),
                DistFlags.read(session.options().dist()), Ports.free(), mock.port(), cell.h2c(),
                cell.upstreamMaxConnections(session.options()),
                session.raw().resolve("gc-jetty-proxy-" + cell.name() + "-" + rep + ".log"),
                session.raw().resolve("logs/jetty-proxy-" + cell.name() + "-r" + rep + ".log"), session.pinning());
            default -> throw new IllegalArgumentException(ref);
        };
    }

    /** Starts a gateway for a repetition of {@code cell} with the cell's own chain. */
    GatewayProcess startGateway(Cell cell, int rep, MockProcess mock, boolean routeAll) throws IOException
    {
        return startGateway(cell, cell, "gateway", rep, mock, routeAll);
    }

    /**
     * Starts a gateway for a repetition of {@code cell}, with {@code config}'s chain. Its config, GC log, log and
     * request log are named after the cell and the repetition, and after {@code name} too unless it is
     * {@code gateway}: {@code --pair}'s baseline has files of its own.
     *
     * @param cell the cell being run
     * @param config the cell whose gateway config it runs: {@code cell}, or its baseline
     * @param name {@code gateway} or {@code baseline}
     */
    GatewayProcess startGateway(Cell cell, Cell config, String name, int rep, MockProcess mock, boolean routeAll)
        throws IOException
    {
        String stem = "gateway".equals(name) ? cell.name() : cell.name() + "-" + name;
        int port = Ports.free();
        int adminPort = session.stages() ? Ports.free() : -1;
        Path file = session.raw().resolve("config/gateway-" + stem + "-r" + rep + ".yaml");
        Files.createDirectories(file.getParent());
        String requestLog = session.raw().resolve("logs/requests-" + stem + "-r" + rep + ".jsonl").toAbsolutePath().toString();
        String redisUrl = "redis".equals(config.limitsStore()) ? BenchRedis.get(session).url() : null;
        BenchOptions o = session.options();
        String yaml = GatewayConfigs.yaml(config, config.upstreamMaxConnections(o), port, mock.port(), routeAll, adminPort,
            requestLog, redisUrl);
        if (!o.gatewayWarmup().isEmpty())
            yaml += "warmup: " + o.gatewayWarmup() + "\n";
        if (!o.gatewayAdmission().isEmpty())
            yaml += "admission: " + o.gatewayAdmission() + "\n";
        Files.writeString(file, yaml, StandardCharsets.UTF_8);
        Path gc = session.raw().resolve("gc-" + stem + "-" + rep + ".log");
        Files.deleteIfExists(gc);
        // --pair's baseline runs its own distribution when --baseline-dist names one.
        Path dist = "baseline".equals(name) ? o.baselineDist() : o.dist();
        return GatewayProcess.start(name, dist, file, port, adminPort, gc,
            session.raw().resolve("logs/gateway-" + stem + "-r" + rep + ".log"), session.pinning(), o.gatewayJvm(),
            o.gatewayJvmAdd());
    }

    private BytePipeProcess startNginx(Cell cell, int rep, MockProcess mock) throws IOException
    {
        Path prefix = session.raw().resolve("nginx-" + cell.name() + "-r" + rep);
        return NginxProcess.start(session.nginxBinary(), prefix, Ports.free(), mock.http11Port(),
            session.options().nginxWorkers(), session.pinning());
    }

    /** @return a probe of the target's and the mock's processes, the target's GC log and, when on, its stage table */
    RunProbe targetProbe(TargetProcess t, MockProcess mock)
    {
        return new RunProbe(t.process().handle(), mock.process().handle(), t.gcLog(),
            session.stages() && t instanceof GatewayProcess gw ? gw.adminUri("/_sluice/stages") : null);
    }
}
