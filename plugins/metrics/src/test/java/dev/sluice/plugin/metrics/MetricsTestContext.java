package dev.sluice.plugin.metrics;

import dev.sluice.api.admin.AdminHandler;
import dev.sluice.api.admin.AdminRoutes;
import dev.sluice.api.binding.BindingContext;
import dev.sluice.api.exchange.CompletionListener;
import dev.sluice.api.exchange.Next;
import dev.sluice.api.service.RuntimeStats;
import dev.sluice.api.testing.TestBindingContext;
import dev.sluice.api.upstream.Upstream;
import dev.sluice.api.upstream.UpstreamOptions;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A {@link BindingContext} that records what a binding registers (admin routes, completion listeners), with the exit
 * {@code next}, advertised models a test sets and runtime figures a test sets.
 */
final class MetricsTestContext implements BindingContext
{
    final TestBindingContext exits = new TestBindingContext("next");
    final Map<String, AdminHandler> routes = new LinkedHashMap<>();
    final List<CompletionListener> listeners = new ArrayList<>();
    final Set<String> advertised = new LinkedHashSet<>();
    final List<RuntimeStats.UpstreamStats> upstreams = new ArrayList<>();
    long inFlight;
    int advertisedReads;
    private final boolean checkOnly;

    MetricsTestContext(boolean checkOnly)
    {
        this.checkOnly = checkOnly;
    }

    @Override
    public Next exit(String bindingName)
    {
        return exits.exit(bindingName);
    }

    @Override
    public Upstream upstream(UpstreamOptions options)
    {
        throw new AssertionError("no upstream");
    }

    @Override
    public String env(String name)
    {
        return null;
    }

    @Override
    public boolean checkOnly()
    {
        return checkOnly;
    }

    @Override
    public AdminRoutes admin()
    {
        return (method, path, handler) -> routes.put(method + " " + path, handler);
    }

    @Override
    public void onComplete(CompletionListener listener)
    {
        listeners.add(listener);
    }

    @Override
    public Set<String> advertisedModels()
    {
        advertisedReads++;
        return advertised;
    }

    @Override
    public RuntimeStats runtimeStats()
    {
        return new RuntimeStats()
        {
            @Override
            public long inFlight()
            {
                return inFlight;
            }

            @Override
            public List<UpstreamStats> upstreams()
            {
                return List.copyOf(upstreams);
            }
        };
    }
}
