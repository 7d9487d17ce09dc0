package dev.sluice.plugin.guard;

import dev.sluice.api.admin.AdminRoutes.AdminRequest;
import dev.sluice.api.admin.AdminRoutes.AdminResponse;
import dev.sluice.api.admin.AdminRoutes;
import dev.sluice.support.json.JsonStrings;

import java.util.List;
import java.util.Map;
import java.util.WeakHashMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * The {@code GET /guard/stats} admin endpoint of one gateway: the hit counters of every guard binding.
 *
 * <pre>{@code
 * {"bindings":[{"binding":"guard_in","mode":"enforce","rules":[
 *   {"direction":"request","rule":"card","action":"block","hits":3}, ...]}]}
 * }</pre>
 *
 * With {@code ?binding=NAME}, only that binding. {@code action} is the configured one; in report mode nothing was
 * blocked or redacted, and the binding's {@code mode} says so.
 *
 * <p>The admin listener serves one handler per path, and every guard binding of a gateway shares this one. The
 * bindings of one gateway are told apart from another gateway's in the same JVM (tests) by the runtime's shared
 * executor, which is one per gateway: the registry maps it, weakly, to the gateway's endpoint. Registration happens at
 * startup only, so it is synchronized; reading the counters takes no lock.
 */
final class GuardStats
{
    /** The admin path. */
    static final String PATH = "/guard/stats";

    private static final Map<Object, GuardStats> BY_GATEWAY = new WeakHashMap<>();

    private final List<Entry> entries = new CopyOnWriteArrayList<>();

    private GuardStats()
    {
    }

    /** What one binding reports. */
    record Entry(String binding, boolean report, List<Rule> rules)
    {
    }

    /**
     * Adds a binding's counters to its gateway's endpoint, registering the endpoint with the first binding.
     *
     * @param gateway an object that is one per gateway (the runtime's shared executor)
     * @param admin   the binding's admin routes
     * @param entry   what the binding reports
     * @return undoes the registration of {@code entry} (for {@code close()})
     */
    static Runnable register(Object gateway, AdminRoutes admin, Entry entry)
    {
        GuardStats stats;
        synchronized (BY_GATEWAY)
        {
            stats = BY_GATEWAY.get(gateway);
            if (stats == null)
            {
                stats = new GuardStats();
                admin.add("GET", PATH, stats::handle);
                BY_GATEWAY.put(gateway, stats);
            }
        }
        GuardStats registered = stats;
        registered.entries.add(entry);
        return () -> registered.entries.remove(entry);
    }

    private CompletionStage<AdminResponse> handle(AdminRequest request)
    {
        String only = request.queryParameter("binding");
        StringBuilder json = new StringBuilder(256).append("{\"bindings\":[");
        boolean firstBinding = true;
        for (Entry entry : entries)
        {
            if (only != null && !only.equals(entry.binding()))
                continue;
            json.append(firstBinding ? "" : ",").append("{\"binding\":").append(JsonStrings.quote(entry.binding()))
                .append(",\"mode\":").append(entry.report() ? "\"report\"" : "\"enforce\"").append(",\"rules\":[");
            firstBinding = false;
            boolean firstRule = true;
            for (Rule rule : entry.rules())
            {
                json.append(firstRule ? "" : ",").append("{\"direction\":\"").append(rule.direction().configName())
                    .append("\",\"rule\":").append(JsonStrings.quote(rule.name())).append(",\"action\":\"")
                    .append(rule.action().configName()).append("\",\"hits\":").append(rule.hits()).append('}');
                firstRule = false;
            }
            json.append("]}");
        }
        json.append("]}");
        return CompletableFuture.completedFuture(AdminResponse.json(200, json.toString()));
    }
}
