package dev.sluice.api.binding;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;

import java.util.List;
import java.util.Objects;

/**
 * One entry of a binding's {@code routes} list: conditions the binding interprets, where the exchange goes when they
 * hold — one {@code exit}, or several {@code targets} — and optional binding-defined rewrites and settings.
 *
 * <pre>{@code
 * routes:
 *   - when: [ { model: "gpt-*" } ]
 *     exit: south_openai
 *     with: { model: "gpt-4o-mini" }
 *   - when: [ { model: "claude-*" } ]
 *     targets: [ { exit: anthropic_a }, { exit: anthropic_b, priority: 1 } ]
 *     retry: { attempts: 2 }
 * }</pre>
 *
 * <p>The runtime checks that a route has exactly one of {@code exit} and {@code targets}, that every exit exists and
 * that no cycle forms; the conditions, {@code with}, each target's settings and the route's other keys are the
 * binding's to validate.
 *
 * @param path     the dotted config path of this route, e.g. {@code bindings.router.routes[1]}, for messages
 * @param when     the conditions, each a raw JSON object (any one holding selects the route); empty: always
 * @param exit     the name of the binding to go to, or {@code null} when the route has {@code targets}
 * @param with     binding-defined rewrites as raw JSON, or {@code null}
 * @param targets  the route's targets in config order, or empty when it has an {@code exit}
 * @param settings the route's other keys as a raw JSON object (a router's {@code retry}, {@code balance}…), never
 *                 {@code null}; empty if none
 */
public record RouteConfig(String path, List<JsonNode> when, String exit, JsonNode with, List<RouteTarget> targets,
                          JsonNode settings)
{
    public RouteConfig
    {
        Objects.requireNonNull(path, "path");
        when = List.copyOf(when);
        targets = targets == null ? List.of() : List.copyOf(targets);
        if (exit == null && targets.isEmpty())
            throw new NullPointerException("exit");
        settings = settings == null ? JsonNodeFactory.instance.objectNode() : settings;
    }

    /** A route with one exit and no other settings. */
    public RouteConfig(String path, List<JsonNode> when, String exit, JsonNode with)
    {
        this(path, when, Objects.requireNonNull(exit, "exit"), with, List.of(), null);
    }

    /** @return the names of every binding this route may go to: its exit, or its targets' exits in order */
    public List<String> exits()
    {
        if (targets.isEmpty())
            return List.of(exit);
        return targets.stream().map(RouteTarget::exit).toList();
    }
}
