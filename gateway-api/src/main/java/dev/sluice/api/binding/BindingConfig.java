package dev.sluice.api.binding;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import dev.sluice.api.config.ConfigException;

import java.util.List;
import java.util.Objects;

/**
 * A binding's entry in the config file, after environment substitution. The runtime has already checked the
 * generic shape (known keys, exits that exist, no cycles); {@code options} and route conditions are the
 * factory's to validate, strictly, with gateway-support's {@code Options.bind}.
 *
 * @param name    the binding's name (its key under {@code bindings})
 * @param type    the binding type, which selects the factory
 * @param kind    server, proxy or client
 * @param options the binding's options as raw JSON (an empty object if absent)
 * @param exit    the default next binding, or {@code null}
 * @param routes  the binding's routes (empty if none)
 */
public record BindingConfig(String name, String type, BindingKind kind, JsonNode options, String exit,
                            List<RouteConfig> routes)
{
    public BindingConfig
    {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(type, "type");
        Objects.requireNonNull(kind, "kind");
        Objects.requireNonNull(options, "options");
        routes = List.copyOf(routes);
    }

    /** @return the dotted config path of this binding, {@code bindings.NAME} */
    public String path()
    {
        return "bindings." + name;
    }

    /** @return the dotted config path of this binding's options */
    public String optionsPath()
    {
        return path() + ".options";
    }

    /**
     * Checks the shape of a proxy binding that sends every request it does not answer itself to one exit (a log, a
     * guard, a cache): no {@code routes} (they would be ignored), and an {@code exit}.
     *
     * <pre>{@code
     * String exit = config.requireSingleExit("log passes every request to its exit", "the binding requests go to");
     * }</pre>
     *
     * @param noRoutes why routes do not apply, the end of the message (e.g. {@code "log passes every request to its
     *                 exit"})
     * @param exit     what the exit is, for the message when it is missing (e.g. {@code "the binding requests go to"})
     * @return the exit
     * @throws ConfigException on {@code bindings.NAME.routes} when routes are given, on {@code bindings.NAME.exit}
     *                         when no exit is
     * @since 0.4.0
     */
    public String requireSingleExit(String noRoutes, String exit)
    {
        if (!routes.isEmpty())
            throw new ConfigException(path() + ".routes", "value: " + routes.size() + " routes (expected: none; "
                + noRoutes + ")");
        if (this.exit == null)
            throw new ConfigException(path() + ".exit", "must be set (expected: " + exit + ")");
        return this.exit;
    }

    /** The three kinds of binding, by their place in the chain. */
    public enum BindingKind
    {
        /** Accepts a dialect from clients on some paths and starts exchanges. */
        SERVER,
        /** Sees every exchange on its way in and its reply on its way out. */
        PROXY,
        /** Speaks a dialect to one upstream; the end of a chain. */
        CLIENT
    }

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
}
