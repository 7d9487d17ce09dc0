package dev.sluice.plugin.guard;

import java.util.List;
import java.util.Map;

/**
 * The options of a {@code guard} binding, bound strictly by {@link dev.sluice.support.config.Options#bind} (snake_case
 * keys; any other key is a startup error naming its path).
 *
 * <pre>{@code
 * options:
 *   mode: enforce                       # or report: count hits, change nothing
 *   models: [ "gpt-*" ]                 # optional: only these models (globs); default all
 *   hold_back: 128                      # streamed answers: characters held per text block
 *   deny:
 *     project_names: [ "(?i)project\\s+falcon", "(?i)blue\\s*heron" ]
 *   request:
 *     - { rule: card, action: block }
 *     - { rule: email, action: redact }
 *     - { rule: project_names, action: block }
 *   response:
 *     - { rule: email, action: redact }
 * }</pre>
 *
 * @param mode     {@code enforce} (the default) or {@code report}
 * @param models   model globs ({@code *} any run, {@code ?} one character) the guard applies to, matched against the
 *                 model the upstream is asked for; {@code null} or absent: every model
 * @param holdBack characters of a streamed text block held back before release, 0 to 65536; {@code null}: 128
 * @param deny     named deny lists of regular expressions ({@link java.util.regex.Pattern} syntax); a name is a rule
 *                 name usable in {@code request} and {@code response}; {@code null}: none
 * @param request  rules applied to requests; {@code null}: none
 * @param response rules applied to answers; {@code null}: none
 */
public record GuardOptions(String mode, List<String> models, Integer holdBack, Map<String, List<String>> deny,
                           List<RuleOptions> request, List<RuleOptions> response)
{
    /** The default {@link #holdBack()}. */
    public static final int DEFAULT_HOLD_BACK = 128;

    /** Checks the mode and the window, fills the defaults. */
    public GuardOptions
    {
        mode = mode == null ? "enforce" : mode;
        if (!mode.equals("enforce") && !mode.equals("report"))
            throw new IllegalArgumentException("mode: value: \"" + mode + "\" (expected: enforce or report)");
        models = models == null ? List.of() : List.copyOf(models);
        holdBack = holdBack == null ? DEFAULT_HOLD_BACK : holdBack;
        if (holdBack < 0 || holdBack > 65_536)
            throw new IllegalArgumentException("hold_back: value: " + holdBack + " (expected: 0 to 65536 characters)");
        deny = deny == null ? Map.of() : Map.copyOf(deny);
        request = request == null ? List.of() : List.copyOf(request);
        response = response == null ? List.of() : List.copyOf(response);
    }

    /**
     * One entry of {@code request} or {@code response}.
     *
     * @param rule   a built-in detector ({@code email}, {@code phone}, {@code card}, {@code iban}, {@code api_key}) or
     *               the name of a {@code deny} list; required
     * @param action {@code block} or {@code redact}; required
     */
    public record RuleOptions(String rule, String action)
    {
    }
}
