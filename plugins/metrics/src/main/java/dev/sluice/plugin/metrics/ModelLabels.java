package dev.sluice.plugin.metrics;

import dev.sluice.support.config.ModelGlob;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

/**
 * The {@code model} label: a client chooses the model name, so a name becomes a label value only if the operator named
 * it — a model the gateway advertises (the routes' literal models, {@code GET /v1/models}), a literal entry of the
 * binding's {@code models}, or a name one of its globs matches, at most {@code max_models} of those in all. Every
 * other name is {@link LabelValues#OTHER_VALUE}, and an exchange without a model (refused before its body was read)
 * is {@link LabelValues#NONE_VALUE}. So no client can create series: 200 made-up names add none.
 *
 * <p>{@link #id} allocates nothing: a known name is one {@link ConcurrentHashMap} lookup (hashing the name once), an
 * unknown one is two set lookups and the globs ({@link ModelGlob#matches} allocates nothing either), and it is not
 * remembered, so a flood of made-up names cannot grow anything. Thread-safe.
 */
final class ModelLabels
{
    private final Set<String> literals;
    private final ModelGlob[] globs;
    private final int maxGlobbed;
    private final Supplier<Set<String>> advertisedSource;
    private final ConcurrentHashMap<String, Integer> ids = new ConcurrentHashMap<>();
    private volatile Set<String> advertised;
    private volatile String[] values = {LabelValues.NONE_VALUE, LabelValues.OTHER_VALUE};
    // Guarded by this.
    private int globbed;

    /**
     * @param models     the binding's {@code models} option: names and globs
     * @param maxGlobbed how many names the globs may admit
     * @param advertised the gateway's advertised models; asked once, at the first lookup (the set is complete only once
     *                   the gateway serves)
     */
    ModelLabels(List<String> models, int maxGlobbed, Supplier<Set<String>> advertised)
    {
        Set<String> literal = new HashSet<>();
        List<ModelGlob> patterns = new ArrayList<>();
        for (String m : models)
        {
            ModelGlob glob = ModelGlob.compile(m);
            if (glob.isLiteral())
                literal.add(m);
            else
                patterns.add(glob);
        }
        this.literals = Set.copyOf(literal);
        this.globs = patterns.toArray(new ModelGlob[0]);
        this.maxGlobbed = maxGlobbed;
        this.advertisedSource = advertised;
    }

    /** @return the label id of {@code model}: its own, {@link LabelValues#OTHER} or, for {@code null}, {@link LabelValues#NONE} */
    int id(String model)
    {
        if (model == null)
            return LabelValues.NONE;
        Integer id = ids.get(model);
        if (id != null)
            return id;
        boolean named = literals.contains(model) || advertised().contains(model);
        if (!named && !matchesGlob(model))
            return LabelValues.OTHER;
        return admit(model, named);
    }

    /** @return the label value of {@code id} */
    String value(int id)
    {
        return values[id];
    }

    /** @return the model names admitted so far, in order (for tests and the claims of docs/plugins/metrics.md) */
    List<String> admitted()
    {
        String[] v = values;
        return List.of(Arrays.copyOfRange(v, 2, v.length));
    }

    private Set<String> advertised()
    {
        Set<String> a = advertised;
        if (a == null)
            advertised = a = advertisedSource.get();
        return a;
    }

    private boolean matchesGlob(String model)
    {
        for (ModelGlob glob : globs)
        {
            if (glob.matches(model))
                return true;
        }
        return false;
    }

    private synchronized int admit(String model, boolean named)
    {
        Integer known = ids.get(model);
        if (known != null)
            return known;
        if (!named)
        {
            if (globbed >= maxGlobbed)
                return LabelValues.OTHER;
            globbed++;
        }
        String[] v = values;
        String[] grown = Arrays.copyOf(v, v.length + 1);
        grown[v.length] = model;
        // The values first: a reader that finds the id in the map then finds its value.
        values = grown;
        ids.put(model, v.length);
        return v.length;
    }
}
