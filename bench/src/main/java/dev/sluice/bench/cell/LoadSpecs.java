package dev.sluice.bench.cell;

import java.net.URI;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;

import dev.sluice.bench.load.LoadSpec;

/**
 * The load a cell offers, as {@link LoadSpec}s: the request of its dialect with its headers and body, the direct
 * run's, the refusal cells' (an unknown model or key), and {@code --pair}'s half of it for each of two processes.
 * Pure functions of the cell.
 */
final class LoadSpecs
{
    /** A request not complete after this counts as a timeout. */
    static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(10);

    /**
     * @param spec a cell's open-loop load
     * @return the load of each of {@code --pair}'s two processes: half the rate and half the connections (at least
     * one; 0, the generator's default, stays 0)
     */
    static LoadSpec halfLoad(LoadSpec spec)
    {
        int connections = spec.connections() == 0 ? 0 : Math.max(1, spec.connections() / 2);
        return new LoadSpec(spec.target(), spec.method(), spec.headers(), spec.body(), spec.stream(), spec.h2c(), connections,
            spec.rate() / 2, spec.closedLoopWorkers(), spec.warmup(), spec.measure(), spec.timeout());
    }

    /** @return the model a refusal cell sends: R404 one no route matches, R401 an ordinary one */
    static String refusalModel(Cell cell)
    {
        return cell.virtualKeys() ? Cells.MODEL : Cells.UNKNOWN_MODEL;
    }

    /** @return {@code spec}, with R401's unknown key as {@code Authorization: Bearer} when the cell checks keys */
    static LoadSpec refusalSpec(Cell cell, LoadSpec spec)
    {
        if (!cell.virtualKeys())
            return spec;
        Map<String, String> headers = new LinkedHashMap<>(spec.headers());
        headers.put("authorization", "Bearer " + Cells.UNKNOWN_KEY);
        return new LoadSpec(spec.target(), spec.method(), headers, spec.body(), spec.stream(), spec.h2c(), spec.connections(),
            spec.rate(), spec.closedLoopWorkers(), spec.warmup(), spec.measure(), spec.timeout());
    }

    /** @return the path and query of {@code uri}, as a target's URL takes them */
    static String pathOf(URI uri)
    {
        return uri.getRawPath() + (uri.getRawQuery() == null ? "" : "?" + uri.getRawQuery());
    }

    /**
     * The spec of a cell's load.
     *
     * @param cell the cell
     * @param rate the offered rate
     * @param model the model to name
     * @param target where to send it
     * @param h2c whether to speak h2c
     * @param connections the connection bound or count
     * @param warmup warm-up
     * @param window measurement window
     * @return the spec
     */
    static LoadSpec loadSpec(Cell cell, double rate, String model, URI target, boolean h2c, int connections, Duration warmup,
                             Duration window)
    {
        return loadSpec(cell, cell.provider(), rate, model, target, h2c, connections, warmup, window);
    }

    /** As {@link #loadSpec(Cell, double, String, URI, boolean, int, Duration, Duration)}, in {@code dialect}. */
    static LoadSpec loadSpec(Cell cell, String dialect, double rate, String model, URI target, boolean h2c, int connections,
                             Duration warmup, Duration window)
    {
        Map<String, String> headers = new LinkedHashMap<>();
        headers.put("content-type", "application/json");
        headers.put("accept", cell.stream() ? "text/event-stream" : "application/json");
        if (Dialects.ANTHROPIC.equals(dialect))
            headers.put("anthropic-version", "2023-06-01");
        if (cell.guardrails() || cell.limitsStore() != null)
            headers.put("authorization", "Bearer " + Cells.GATEWAY_KEY);
        if ("miss".equals(cell.cache()))
            headers.put("cache-control", "no-cache");
        return new LoadSpec(target, "POST", headers, Dialects.body(dialect, model, cell.stream(), cell.bodyBytes()),
            cell.stream(), h2c, connections, rate, cell.workers(), warmup, window, REQUEST_TIMEOUT);
    }

    /** @return {@code spec} over HTTP/1.1 with {@code connections} connections */
    static LoadSpec http11(LoadSpec spec, int connections)
    {
        return new LoadSpec(spec.target(), spec.method(), spec.headers(), spec.body(), spec.stream(), false, connections,
            spec.rate(), spec.closedLoopWorkers(), spec.warmup(), spec.measure(), spec.timeout());
    }

    private LoadSpecs()
    {
    }
}
