package dev.sluice.plugin.router;

/**
 * A route's {@code with} block: rewrites applied when the route is taken.
 *
 * @param model the model to ask the upstream for instead of the one the client named (an alias), or {@code null}
 *              to keep it; when set, it must not be blank
 */
public record RouteRewrite(String model)
{
    /** Validates that an alias, when given, is not blank. */
    public RouteRewrite
    {
        if (model != null && model.isBlank())
            throw new IllegalArgumentException("model: value: \"" + model
                + "\" (expected: a model name, or no model to keep the client's)");
    }
}
