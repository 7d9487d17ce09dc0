package dev.sluice.runtime.internal.http;

import dev.sluice.api.exchange.Stage;
import dev.sluice.runtime.internal.chain.DefaultExchange;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.Recorder;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The per-stage breakdown of completed exchanges: how long each stage of a request takes, from the nanosecond
 * marks every exchange carries. Recording is wait-free (HdrHistogram {@link Recorder}s, one per stage), so it can
 * stay on under load; the bench reads it from {@code GET /_sluice/stages} when {@code admin.stages} is on.
 *
 * <p>Stages: {@code read_body} (arrival to last body byte), {@code peek} (model scan and exchange creation),
 * {@code binding:NAME} (from entering a binding to entering the next one; for the client binding, to handing the
 * request to the HTTP client), {@code provider_first_byte} and {@code provider_body} (the provider's own time,
 * not the gateway's), {@code respond} (from the last upstream mark before it to the first write to the client),
 * {@code write} (first to last write), {@code total}, and {@code gateway} (total minus the provider's time).
 */
final class StageStats
{
    private static final long MAX_MICROS = 3_600_000_000L;

    private final List<String> bindingLabels;
    private final Map<String, Stat> stats = new ConcurrentHashMap<>();
    private final List<String> order = new ArrayList<>();

    private static final class Stat
    {
        final Recorder recorder = new Recorder(MAX_MICROS, 3);
        final Histogram total = new Histogram(MAX_MICROS, 3);
    }

    StageStats(List<String> bindingNames)
    {
        List<String> labels = new ArrayList<>();
        for (String name : bindingNames)
            labels.add("binding:" + name);
        this.bindingLabels = labels;
        order.add("read_body");
        order.add("peek");
        order.addAll(labels);
        order.addAll(List.of("provider_first_byte", "provider_body", "respond", "write", "total", "gateway"));
        for (String label : order)
            stats.put(label, new Stat());
    }

    /** Records the stages of a completed exchange. */
    void record(DefaultExchange e)
    {
        long arrival = e.nanos(Stage.ARRIVAL);
        long body = e.nanos(Stage.BODY_READ);
        long chain = e.nanos(Stage.CHAIN_START);
        long send = e.nanos(Stage.UPSTREAM_SEND);
        long headers = e.nanos(Stage.UPSTREAM_HEADERS);
        long upstreamEnd = e.nanos(Stage.UPSTREAM_END);
        long responseStart = e.nanos(Stage.RESPONSE_START);
        long responseEnd = e.nanos(Stage.RESPONSE_END);
        add("read_body", arrival, body);
        add("peek", body, chain);
        int n = e.pathLength();
        for (int i = 0; i < n; i++)
        {
            long start = e.pathNanos(i);
            long end = i + 1 < n ? e.pathNanos(i + 1) : send;
            add(bindingLabels.get(e.pathBinding(i)), start, end);
        }
        add("provider_first_byte", send, headers);
        add("provider_body", headers, upstreamEnd);
        long lastUpstream = upstreamEnd != 0 && upstreamEnd <= responseStart ? upstreamEnd : headers;
        if (lastUpstream == 0)
            lastUpstream = chain;
        add("respond", lastUpstream, responseStart);
        add("write", responseStart, responseEnd);
        add("total", arrival, responseEnd);
        if (responseEnd != 0)
        {
            long provider = send != 0 && headers != 0 ? (upstreamEnd != 0 ? upstreamEnd : headers) - send : 0;
            long gateway = responseEnd - arrival - provider;
            if (gateway >= 0)
                stats.get("gateway").recorder.recordValue(Math.min(MAX_MICROS, gateway / 1000));
        }
    }

    private void add(String label, long from, long to)
    {
        if (from == 0 || to == 0 || to < from)
            return;
        stats.get(label).recorder.recordValue(Math.min(MAX_MICROS, (to - from) / 1000));
    }

    /** @return the breakdown as JSON; {@code reset} clears it after reading */
    synchronized String json(boolean reset)
    {
        StringBuilder b = new StringBuilder("{\"count\":");
        Map<String, Histogram> snapshot = new LinkedHashMap<>();
        for (String label : order)
        {
            Stat s = stats.get(label);
            s.total.add(s.recorder.getIntervalHistogram());
            snapshot.put(label, s.total);
        }
        b.append(snapshot.get("total").getTotalCount()).append(",\"stages\":[");
        boolean first = true;
        for (Map.Entry<String, Histogram> entry : snapshot.entrySet())
        {
            Histogram h = entry.getValue();
            if (h.getTotalCount() == 0)
                continue;
            b.append(first ? "" : ",").append("{\"name\":\"").append(entry.getKey()).append('"')
                .append(",\"count\":").append(h.getTotalCount())
                .append(",\"p50_us\":").append(h.getValueAtPercentile(50))
                .append(",\"p90_us\":").append(h.getValueAtPercentile(90))
                .append(",\"p99_us\":").append(h.getValueAtPercentile(99))
                .append(",\"mean_us\":").append(String.format(Locale.ROOT, "%.1f", h.getMean())).append('}');
            first = false;
        }
        if (reset)
        {
            for (Stat s : stats.values())
                s.total.reset();
        }
        return b.append("]}").toString();
    }
}
