package dev.sluice.api.binding;

import com.fasterxml.jackson.databind.JsonNode;

import java.util.List;
import java.util.Objects;

/**
 * A binding's entry in the config file, after environment substitution. The runtime has already checked the
 * generic shape (known keys, exits that exist, no cycles); {@code options} and route conditions are the
 * factory's to validate, strictly, with {@link dev.sluice.api.config.Options#bind}.
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
}
