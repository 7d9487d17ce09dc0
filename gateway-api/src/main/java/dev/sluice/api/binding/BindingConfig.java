package dev.sluice.api.binding;

import com.fasterxml.jackson.databind.JsonNode;
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
}
