package dev.sluice.api.binding;

import com.fasterxml.jackson.databind.JsonNode;

import java.util.List;
import java.util.Objects;

/**
 * One entry of a binding's {@code routes} list: conditions the binding interprets, the exit taken when they
 * hold, and optional binding-defined rewrites.
 *
 * <pre>{@code
 * routes:
 *   - when: [ { model: "gpt-*" } ]
 *     exit: south_openai
 *     with: { model: "gpt-4o-mini" }
 * }</pre>
 *
 * @param path  the dotted config path of this route, e.g. {@code bindings.router.routes[1]}, for messages
 * @param when  the conditions, each a raw JSON object (any one holding selects the route); empty: always
 * @param exit  the name of the binding to go to
 * @param with  binding-defined rewrites as raw JSON, or {@code null}
 */
public record RouteConfig(String path, List<JsonNode> when, String exit, JsonNode with)
{
    public RouteConfig
    {
        Objects.requireNonNull(path, "path");
        when = List.copyOf(when);
        Objects.requireNonNull(exit, "exit");
    }
}
