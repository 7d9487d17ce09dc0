package dev.sluice.api.binding;

import com.fasterxml.jackson.databind.JsonNode;

import java.util.Objects;

/**
 * One entry of a route's {@code targets} list: the binding to try and the binding-defined settings of that try
 * (a router's {@code weight}, {@code priority}, {@code with}).
 *
 * <pre>{@code
 * targets:
 *   - { exit: openai_a, weight: 3 }
 *   - { exit: south_anthropic, priority: 1, with: { model: "claude-sonnet-4-5" } }
 * }</pre>
 *
 * @param path     the dotted config path of this target, e.g. {@code bindings.router.routes[0].targets[2]}
 * @param exit     the name of the binding to go to
 * @param settings the target's other keys as a raw JSON object (never {@code null}; empty if none), for the binding to
 *                 validate strictly
 * @since 0.5.0
 */
public record RouteTarget(String path, String exit, JsonNode settings)
{
    public RouteTarget
    {
        Objects.requireNonNull(path, "path");
        Objects.requireNonNull(exit, "exit");
        Objects.requireNonNull(settings, "settings");
    }
}
