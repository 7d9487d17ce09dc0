package dev.sluice.runtime.internal.config;

import dev.sluice.api.binding.BindingConfig;
import dev.sluice.api.binding.BindingConfig.BindingKind;
import dev.sluice.api.binding.BindingConfig.RouteConfig;
import dev.sluice.api.binding.BindingConfig.RouteTarget;
import dev.sluice.api.config.ConfigException;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/** Checks the binding graph: kinds have the exits they need, exits exist, no cycles, chains end at clients. */
final class GraphCheck
{
    private GraphCheck()
    {
    }

    static void check(Map<String, BindingConfig> bindings)
    {
        boolean anyServer = false;
        for (BindingConfig b : bindings.values())
        {
            switch (b.kind())
            {
                case SERVER ->
                {
                    anyServer = true;
                    if (!b.routes().isEmpty())
                        throw new ConfigException(b.path() + ".routes", "server bindings take an exit, not routes");
                    if (b.exit() == null)
                        throw new ConfigException(b.path() + ".exit", "must be set (expected: the binding that handles this server's requests)");
                }
                case PROXY ->
                {
                    if (b.exit() == null && b.routes().isEmpty())
                        throw new ConfigException(b.path() + ".exit", "must be set: a proxy binding needs an exit or routes");
                }
                case CLIENT ->
                {
                    if (b.exit() != null)
                        throw new ConfigException(b.path() + ".exit", "client bindings end a chain and take no exit");
                    if (!b.routes().isEmpty())
                        throw new ConfigException(b.path() + ".routes", "client bindings end a chain and take no routes");
                }
                default -> throw new IllegalStateException();
            }
            for (Edge edge : exits(b))
            {
                BindingConfig target = bindings.get(edge.target());
                if (target == null)
                    throw new ConfigException(edge.path(), "value: \"" + edge.target() + "\" names no binding (expected one of: "
                        + String.join(", ", bindings.keySet()) + ")");
                if (target.kind() == BindingKind.SERVER)
                    throw new ConfigException(edge.path(), "value: \"" + edge.target() + "\" is a server binding; a chain never reaches a client binding through it");
            }
        }
        if (!anyServer)
            throw new ConfigException("bindings", "no server binding (expected: at least one binding of kind server)");
        // Depth-first search with colours: grey on the stack, black done. A grey target is a cycle.
        Map<String, Integer> colour = new HashMap<>();
        for (String name : bindings.keySet())
            visit(name, bindings, colour, new ArrayList<>());
    }

    private static void visit(String name, Map<String, BindingConfig> bindings, Map<String, Integer> colour, List<String> stack)
    {
        Integer c = colour.get(name);
        if (c != null && c == 2)
            return;
        if (c != null && c == 1)
        {
            List<String> cycle = new ArrayList<>(stack.subList(stack.indexOf(name), stack.size()));
            cycle.add(name);
            BindingConfig from = bindings.get(stack.get(stack.size() - 1));
            String path = exits(from).stream().filter(e -> e.target().equals(name)).map(Edge::path).findFirst().orElse(from.path());
            throw new ConfigException(path, "creates a cycle: " + String.join(" -> ", cycle));
        }
        colour.put(name, 1);
        stack.add(name);
        for (Edge e : exits(bindings.get(name)))
            visit(e.target(), bindings, colour, stack);
        stack.remove(stack.size() - 1);
        colour.put(name, 2);
    }

    static List<Edge> exits(BindingConfig b)
    {
        List<Edge> edges = new ArrayList<>();
        if (b.exit() != null)
            edges.add(new Edge(b.exit(), b.path() + ".exit"));
        for (RouteConfig r : b.routes())
        {
            if (r.targets().isEmpty())
                edges.add(new Edge(r.exit(), r.path() + ".exit"));
            for (RouteTarget t : r.targets())
                edges.add(new Edge(t.exit(), t.path() + ".exit"));
        }
        return edges;
    }

    record Edge(String target, String path)
    {
    }
}
