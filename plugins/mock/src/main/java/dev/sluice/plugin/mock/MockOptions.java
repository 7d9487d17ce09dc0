package dev.sluice.plugin.mock;

/**
 * Options of a {@code mock} client binding. Both are optional:
 *
 * <pre>{@code
 * south_mock: { type: mock, kind: client }                                   # answers DEFAULT_TEXT
 * south_mock: { type: mock, kind: client, options: { text: "All good." } }   # answers a fixed text
 * south_mock: { type: mock, kind: client, options: { echo: true } }          # answers "You said: <last user text>"
 * }</pre>
 *
 * @param text the fixed answer; {@code null} for {@link #DEFAULT_TEXT}; must not be empty
 * @param echo whether to answer {@code You said: <text of the last user message>} instead of a fixed text;
 *             {@code null} for false; cannot be combined with {@code text}
 */
public record MockOptions(String text, Boolean echo)
{
    /** The answer when neither {@code text} nor {@code echo} is set. */
    public static final String DEFAULT_TEXT = "Hello from Sluice's built-in mock provider.";

    /** Validates the combination and fills the defaults. */
    public MockOptions
    {
        if (text != null && text.isEmpty())
            throw new IllegalArgumentException("text: value: \"\" (expected: a non-empty answer, or no text for the default)");
        if (text != null && Boolean.TRUE.equals(echo))
            throw new IllegalArgumentException("echo: value: true "
                + "(expected: false or absent when text is set; echo answers with the user's own words)");
        text = text == null ? DEFAULT_TEXT : text;
        echo = echo != null && echo;
    }
}
