package dev.sluice.plugin.router;

/**
 * One entry of a route's {@code when} list: {@code { model: "gpt-*" }}.
 *
 * @param model the model name or glob the exchange's model must match ({@code *} any run, {@code ?} one character,
 *              case-sensitive); required and non-blank. {@code null} only while binding: the factory reports a
 *              missing model after the binder has reported unknown keys, so {@code { modle: x }} names the typo.
 */
public record ModelCondition(String model)
{
    /** The expectation quoted in error messages. */
    static final String EXPECTED = "(expected: a model name or a glob such as gpt-*)";

    /** Validates that the glob, when present, is not blank. */
    public ModelCondition
    {
        if (model != null && model.isBlank())
            throw new IllegalArgumentException("model: value: \"" + model + "\" " + EXPECTED);
    }
}
