package dev.sluice.api.testing;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * A small parser of the Prometheus text exposition format (0.0.4; OpenMetrics' {@code # EOF} is accepted): {@code #
 * HELP} and {@code # TYPE} lines, and samples {@code name{label="value",…} value [timestamp]} with the format's escapes
 * in label values. It fails on any line it does not understand, so a test also checks the output is well-formed.
 * For tests of metrics plugins (the Prometheus Java client has writers, not a parser).
 */
public final class Exposition
{
    /** One sample line. */
    public record Sample(String name, Map<String, String> labels, double value)
    {
        boolean has(String... pairs)
        {
            for (int i = 0; i < pairs.length; i += 2)
            {
                if (!pairs[i + 1].equals(labels.get(pairs[i])))
                    return false;
            }
            return true;
        }
    }

    public final Map<String, String> types = new LinkedHashMap<>();
    public final Map<String, String> helps = new LinkedHashMap<>();
    public final List<Sample> samples = new ArrayList<>();

    public static Exposition parse(String text)
    {
        Exposition e = new Exposition();
        for (String line : text.split("\n"))
        {
            if (line.isEmpty() || line.equals("# EOF"))
                continue;
            if (line.startsWith("# HELP "))
            {
                String rest = line.substring(7);
                int sp = rest.indexOf(' ');
                e.helps.put(sp < 0 ? rest : rest.substring(0, sp), sp < 0 ? "" : rest.substring(sp + 1));
                continue;
            }
            if (line.startsWith("# TYPE "))
            {
                String[] parts = line.substring(7).split(" ");
                if (parts.length != 2)
                    throw new AssertionError("bad TYPE line: " + line);
                e.types.put(parts[0], parts[1]);
                continue;
            }
            if (line.startsWith("# UNIT "))
                continue;
            if (line.startsWith("#"))
                throw new AssertionError("unknown comment line: " + line);
            e.samples.add(sample(line));
        }
        return e;
    }

    private static Sample sample(String line)
    {
        int i = 0;
        while (i < line.length() && (Character.isLetterOrDigit(line.charAt(i)) || line.charAt(i) == '_' || line.charAt(i) == ':'))
            i++;
        String name = line.substring(0, i);
        if (name.isEmpty())
            throw new AssertionError("no metric name: " + line);
        Map<String, String> labels = new TreeMap<>();
        if (i < line.length() && line.charAt(i) == '{')
        {
            i++;
            while (line.charAt(i) != '}')
            {
                int eq = line.indexOf('=', i);
                String label = line.substring(i, eq);
                if (line.charAt(eq + 1) != '"')
                    throw new AssertionError("unquoted label value: " + line);
                StringBuilder value = new StringBuilder();
                int j = eq + 2;
                for (; line.charAt(j) != '"'; j++)
                {
                    char c = line.charAt(j);
                    if (c == '\\')
                    {
                        char n = line.charAt(++j);
                        value.append(n == 'n' ? '\n' : n);
                    }
                    else
                    {
                        value.append(c);
                    }
                }
                if (labels.put(label, value.toString()) != null)
                    throw new AssertionError("label twice: " + line);
                i = j + 1;
                if (line.charAt(i) == ',')
                    i++;
            }
            i++;
        }
        if (line.charAt(i) != ' ')
            throw new AssertionError("no space before the value: " + line);
        String[] rest = line.substring(i + 1).split(" ");
        if (rest.length > 2)
            throw new AssertionError("too many fields: " + line);
        String v = rest[0];
        double value = switch (v)
        {
            case "+Inf" -> Double.POSITIVE_INFINITY;
            case "-Inf" -> Double.NEGATIVE_INFINITY;
            case "NaN" -> Double.NaN;
            default -> Double.parseDouble(v);
        };
        return new Sample(name, labels, value);
    }

    /** @return the samples of {@code name} whose labels include the given name/value pairs */
    public List<Sample> samples(String name, String... pairs)
    {
        return samples.stream().filter(s -> s.name.equals(name) && s.has(pairs)).toList();
    }

    /** @return the sum of the samples of {@code name} whose labels include the given pairs (0 if none) */
    public double sum(String name, String... pairs)
    {
        return samples(name, pairs).stream().mapToDouble(Sample::value).sum();
    }

    /** @return the value of the one sample of {@code name} with exactly these labels */
    public double value(String name, String... pairs)
    {
        List<Sample> found = samples(name, pairs).stream().filter(s -> s.labels.size() == pairs.length / 2).toList();
        if (found.size() != 1)
            throw new AssertionError(found.size() + " samples " + name + " " + String.join(",", pairs) + " in " + samples(name));
        return found.get(0).value;
    }

    /** @return the values {@code label} takes in the samples of {@code name} */
    public Set<String> labelValues(String name, String label)
    {
        Set<String> values = new TreeSet<>();
        for (Sample s : samples(name))
        {
            if (s.labels.containsKey(label))
                values.add(s.labels.get(label));
        }
        return values;
    }
}
