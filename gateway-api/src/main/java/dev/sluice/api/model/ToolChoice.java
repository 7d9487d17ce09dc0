package dev.sluice.api.model;

import java.util.Objects;

/** How the model may use tools. */
public sealed interface ToolChoice permits ToolChoice.Auto, ToolChoice.None, ToolChoice.Required, ToolChoice.Named
{
    /** The model decides. */
    record Auto() implements ToolChoice
    {
    }

    /** The model must not call tools. */
    record None() implements ToolChoice
    {
    }

    /** The model must call at least one tool. */
    record Required() implements ToolChoice
    {
    }

    /** The model must call this tool. */
    record Named(String name) implements ToolChoice
    {
        public Named
        {
            Objects.requireNonNull(name, "name");
        }
    }
}
