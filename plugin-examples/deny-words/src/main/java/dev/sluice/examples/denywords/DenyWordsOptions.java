package dev.sluice.examples.denywords;

import java.util.List;
import java.util.Map;

/**
 * The options of a {@code deny-words} binding, bound from the config by
 * {@link dev.sluice.support.config.Options#bind}: keys are the snake_case names of the components ({@code ignoreCase}
 * is written {@code ignore_case}), and any other key is a startup error naming its path.
 *
 * <pre>{@code
 * options: { words: [ "project-x", "acme confidential" ], ignore_case: true, headers: { x-guardrail: deny-words } }
 * }</pre>
 *
 * <p>Validation lives in the compact constructor: an {@link IllegalArgumentException} whose message starts with
 * the field name ({@code "words[1]: ..."}) becomes a {@link dev.sluice.api.config.ConfigException} at
 * {@code bindings.NAME.options.words[1]}.
 *
 * @param words      the words or phrases to block; required, at least one, none blank. {@code null} only while
 *                   binding: {@link DenyWordsFactory} reports a missing list, after the binder has reported unknown
 *                   keys, so a typo such as {@code word:} is named as the unknown key it is
 * @param ignoreCase whether matching ignores case; {@code null} (absent) means {@code true}
 * @param headers    response headers added to every answer that passes and to every refusal, so a client can see
 *                   the guardrail ran; {@code null} (absent) means none. A name the runtime owns
 *                   ({@code content-type}, {@code x-request-id}, hop-by-hop…) is a config error: see
 *                   {@link dev.sluice.api.exchange.ResponseHeaders}
 */
public record DenyWordsOptions(List<String> words, Boolean ignoreCase, Map<String, String> headers)
{
    /** The two-component form, from before {@code headers}. */
    public DenyWordsOptions(List<String> words, Boolean ignoreCase)
    {
        this(words, ignoreCase, null);
    }

    /** Checks every word and fills the default of {@code ignore_case}. */
    public DenyWordsOptions
    {
        if (words != null)
        {
            if (words.isEmpty())
                throw new IllegalArgumentException("words: value: [] (expected: at least one word)");
            for (int i = 0; i < words.size(); i++)
            {
                String word = words.get(i);
                if (word == null || word.isBlank())
                    throw new IllegalArgumentException("words[" + i + "]: value: " + (word == null ? "null" : "\"" + word + "\"")
                        + " (expected: a non-blank word or phrase)");
            }
            words = List.copyOf(words);
        }
        ignoreCase = ignoreCase == null || ignoreCase;
        headers = headers == null ? Map.of() : Map.copyOf(headers);
    }

}
