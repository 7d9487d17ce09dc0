package dev.sluice.runtime.internal.http;

import dev.sluice.api.exchange.Exchange.Stage;
import dev.sluice.runtime.internal.chain.DefaultExchange;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.Recorder;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

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
    /** The largest recorded value: one hour, in microseconds (larger values are recorded as this). */
    private static final long MAX_MICROS = 3_600_000_000L;
    /**
     * Two significant digits (1% resolution) is plenty for a breakdown and keeps each histogram at ~27 KB instead of
     * ~190 KB with three: a table of 13 stages holds three of them per stage (the recorder's two and the running
     * total), ~1 MB in all rather than ~7 MB of old generation.
     */
    private static final int DIGITS = 2;

    private static final int READ_BODY = 0;
    private static final int PEEK = 1;
    /** The index of the first binding's stat; the fixed stages after the bindings follow {@link #TAIL}. */
    private static final int FIRST_BINDING = 2;
    private static final String[] TAIL = {"provider_first_byte", "provider_body", "respond", "write", "total", "gateway"};

    private final String[] labels;
    private final Recorder[] recorders;
    private final Histogram[] totals;
    private final int providerFirstByte;

    StageStats(List<String> bindingNames)
    {
        List<String> order = new ArrayList<>();
        order.add("read_body");
        order.add("peek");
        for (String name : bindingNames)
            order.add("binding:" + name);
        order.addAll(List.of(TAIL));
        labels = order.toArray(new String[0]);
        recorders = new Recorder[labels.length];
        totals = new Histogram[labels.length];
        for (int i = 0; i < labels.length; i++)
        {
            recorders[i] = new Recorder(MAX_MICROS, DIGITS);
            totals[i] = new Histogram(MAX_MICROS, DIGITS);
        }
        providerFirstByte = FIRST_BINDING + bindingNames.size();
    }

    /** Records the stages of a completed exchange: one wait-free recorder update per stage, no allocation. */
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
        add(READ_BODY, arrival, body);
        add(PEEK, body, chain);
        int n = e.pathLength();
        for (int i = 0; i < n; i++)
        {
            long start = e.pathNanos(i);
            long end = i + 1 < n ? e.pathNanos(i + 1) : send;
            add(FIRST_BINDING + e.pathBinding(i), start, end);
        }
        int tail = providerFirstByte;
        add(tail, send, headers);
        add(tail + 1, headers, upstreamEnd);
        long lastUpstream = upstreamEnd != 0 && upstreamEnd <= responseStart ? upstreamEnd : headers;
        if (lastUpstream == 0)
            lastUpstream = chain;
        add(tail + 2, lastUpstream, responseStart);
        add(tail + 3, responseStart, responseEnd);
        add(tail + 4, arrival, responseEnd);
        if (responseEnd != 0)
        {
            long provider = send != 0 && headers != 0 ? (upstreamEnd != 0 ? upstreamEnd : headers) - send : 0;
            long gateway = responseEnd - arrival - provider;
            if (gateway >= 0)
                recorders[tail + 5].recordValue(Math.min(MAX_MICROS, gateway / 1000));
        }
    }

    private void add(int stat, long from, long to)
    {
        if (from == 0 || to == 0 || to < from)
            return;
        recorders[stat].recordValue(Math.min(MAX_MICROS, (to - from) / 1000));
    }

    /** @return the breakdown as JSON; {@code reset} clears it after reading */
    synchronized String json(boolean reset)
    {
        for (int i = 0; i < labels.length; i++)
            totals[i].add(recorders[i].getIntervalHistogram());
        StringBuilder b = new StringBuilder("{\"count\":");
        b.append(totals[providerFirstByte + 4].getTotalCount()).append(",\"stages\":[");
        boolean first = true;
        for (int i = 0; i < labels.length; i++)
        {
            Histogram h = totals[i];
            if (h.getTotalCount() == 0)
                continue;
            b.append(first ? "" : ",").append("{\"name\":\"").append(labels[i]).append('"')
                .append(",\"count\":").append(h.getTotalCount())
                .append(",\"p50_us\":").append(h.getValueAtPercentile(50))
                .append(",\"p90_us\":").append(h.getValueAtPercentile(90))
                .append(",\"p99_us\":").append(h.getValueAtPercentile(99))
                .append(",\"mean_us\":").append(String.format(Locale.ROOT, "%.1f", h.getMean())).append('}');
            first = false;
        }
        if (reset)
        {
            for (Histogram h : totals)
                h.reset();
        }
        return b.append("]}").toString();
    }
}
