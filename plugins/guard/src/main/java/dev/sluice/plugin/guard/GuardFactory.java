package dev.sluice.plugin.guard;

import dev.sluice.api.binding.BindingConfig;
import dev.sluice.api.binding.BindingContext;
import dev.sluice.api.binding.ProxyBinding;
import dev.sluice.api.binding.ProxyBindingFactory;
import dev.sluice.api.config.ConfigException;
import dev.sluice.support.config.ModelGlob;
import dev.sluice.support.config.Options;
import org.pf4j.Extension;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.PatternSyntaxException;

/**
 * Creates {@code guard} proxy bindings: content rules on requests and answers (see {@link GuardOptions} for the
 * options, {@link GuardBinding} for what they do). Put one before the router for every route, or one on a router exit
 * for that route only:
 *
 * <pre>{@code
 * bindings:
 *   north_openai: { type: openai, kind: server, exit: guard }
 *   guard:
 *     type: guard
 *     kind: proxy
 *     exit: router
 *     options:
 *       request:  [ { rule: card, action: block }, { rule: email, action: redact } ]
 *       response: [ { rule: email, action: redact } ]
 * }</pre>
 *
 * <p>Every mistake is a {@link ConfigException} naming its path: an unknown rule
 * ({@code bindings.guard.options.request[1].rule: value: "emial" (expected: one of: api_key, card, email, iban, phone,
 * or a deny list)}), an action other than {@code block} or {@code redact}, a regex that does not compile, a deny list
 * named like a built-in detector, the same rule twice in one direction, a blank model glob. Regexes are compiled here,
 * once. Under {@code sluice check} nothing is registered.
 */
@Extension
public final class GuardFactory implements ProxyBindingFactory
{
    /** The binding type. */
    public static final String TYPE = "guard";

    /** @return {@value #TYPE} */
    @Override
    public String type()
    {
        return TYPE;
    }

    /**
     * Validates the options, compiles the rules and, unless {@code context.checkOnly()}, registers the binding's
     * counters on {@code GET /guard/stats}.
     *
     * @throws ConfigException naming the faulty path
     */
    @Override
    public ProxyBinding create(BindingConfig config, BindingContext context)
    {
        config.requireSingleExit("put guards on a router's exits to guard routes differently",
            "the binding checked requests go to");
        String path = config.optionsPath();
        GuardOptions options = Options.bind(config.options(), GuardOptions.class, path);

        Map<String, Detector[]> deny = new java.util.HashMap<>();
        for (String name : new TreeSet<>(options.deny().keySet()))
        {
            String listPath = path + ".deny." + name;
            if (Detector.BUILT_IN.containsKey(name))
                throw new ConfigException(listPath, "a deny list may not take the name of a built-in detector ("
                    + String.join(", ", new TreeSet<>(Detector.BUILT_IN.keySet())) + ")");
            List<String> regexes = options.deny().get(name);
            if (regexes == null || regexes.isEmpty())
                throw new ConfigException(listPath, "value: [] (expected: at least one regular expression)");
            Detector[] detectors = new Detector[regexes.size()];
            for (int i = 0; i < detectors.length; i++)
            {
                String regex = regexes.get(i);
                if (regex == null || regex.isEmpty())
                    throw new ConfigException(listPath + "[" + i + "]", "must not be empty (expected: a regular expression)");
                try
                {
                    detectors[i] = Detector.deny(name, regex);
                }
                catch (PatternSyntaxException e)
                {
                    throw new ConfigException(listPath + "[" + i + "]", "not a valid regular expression: "
                        + e.getDescription() + " near index " + e.getIndex());
                }
            }
            deny.put(name, detectors);
        }

        List<ModelGlob> models = new ArrayList<>();
        for (int i = 0; i < options.models().size(); i++)
        {
            String glob = options.models().get(i);
            if (glob == null || glob.isBlank())
                throw new ConfigException(path + ".models[" + i + "]", "must not be blank (expected: a model name or glob)");
            models.add(ModelGlob.compile(glob));
        }

        boolean report = options.mode().equals("report");
        List<Rule> requestRules = rules(options.request(), Rule.Direction.REQUEST, deny, path + ".request");
        List<Rule> responseRules = rules(options.response(), Rule.Direction.RESPONSE, deny, path + ".response");
        if (requestRules.isEmpty() && responseRules.isEmpty())
            throw new ConfigException(path, "no rules (expected: request or response, a list of { rule, action })");

        Runnable unregister = () -> { };
        if (!context.checkOnly())
        {
            List<Rule> all = new ArrayList<>(requestRules);
            all.addAll(responseRules);
            unregister = GuardStats.register(context.executor(), context.admin(),
                new GuardStats.Entry(config.name(), report, List.copyOf(all)));
        }
        return new GuardBinding(models, requestRules.isEmpty() ? null : new RuleSet(requestRules, report),
            responseRules.isEmpty() ? null : new RuleSet(responseRules, report), options.holdBack(), unregister);
    }

    private static List<Rule> rules(List<GuardOptions.RuleOptions> entries, Rule.Direction direction,
                                    Map<String, Detector[]> deny, String path)
    {
        List<Rule> rules = new ArrayList<>(entries.size());
        Set<String> seen = new HashSet<>();
        for (int i = 0; i < entries.size(); i++)
        {
            GuardOptions.RuleOptions entry = entries.get(i);
            String entryPath = path + "[" + i + "]";
            if (entry == null)
                throw new ConfigException(entryPath, "must be set (expected: { rule, action })");
            if (entry.rule() == null)
                throw new ConfigException(entryPath + ".rule", "must be set (expected: a detector or a deny list name)");
            Detector builtIn = Detector.BUILT_IN.get(entry.rule());
            Detector[] detectors = builtIn != null ? new Detector[] {builtIn} : deny.get(entry.rule());
            if (detectors == null)
            {
                throw new ConfigException(entryPath + ".rule", "value: " + quoted(entry.rule()) + " (expected: one of: "
                    + String.join(", ", new TreeSet<>(Detector.BUILT_IN.keySet()))
                    + (deny.isEmpty() ? "" : ", or a deny list: " + String.join(", ", new TreeSet<>(deny.keySet())))
                    + ")");
            }
            if (!seen.add(entry.rule()))
                throw new ConfigException(entryPath + ".rule", "value: " + quoted(entry.rule())
                    + " (expected: each rule once per direction)");
            Rule.Action action;
            if ("block".equals(entry.action()))
                action = Rule.Action.BLOCK;
            else if ("redact".equals(entry.action()))
                action = Rule.Action.REDACT;
            else if (entry.action() == null)
                throw new ConfigException(entryPath + ".action", "must be set (expected: block or redact)");
            else
                throw new ConfigException(entryPath + ".action", "value: " + quoted(entry.action()) + " (expected: block or redact)");
            rules.add(new Rule(entry.rule(), direction, detectors, action));
        }
        return rules;
    }

    private static String quoted(String value)
    {
        return dev.sluice.support.json.JsonStrings.quote(value);
    }
}
