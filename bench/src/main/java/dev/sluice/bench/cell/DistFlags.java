package dev.sluice.bench.cell;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The distribution's default JVM flags, read from {@code bin/sluice}'s {@code DEFAULT_OPTS="…"} line. The bare Jetty
 * proxy reference runs with exactly these, so that a difference between it and the gateway is never the JVM's
 * settings; reading them from the script (instead of copying them here) keeps the two from drifting apart.
 */
final class DistFlags
{
    private static final Pattern DEFAULT_OPTS = Pattern.compile("^\\s*DEFAULT_OPTS=\"([^\"]*)\"\\s*$", Pattern.MULTILINE);

    private DistFlags()
    {
    }

    /**
     * @param script the text of {@code bin/sluice}
     * @return its default JVM flags
     * @throws IllegalArgumentException if there is no {@code DEFAULT_OPTS="…"} line
     */
    static List<String> parse(String script)
    {
        Matcher m = DEFAULT_OPTS.matcher(script);
        if (!m.find())
            throw new IllegalArgumentException("no DEFAULT_OPTS=\"…\" line in bin/sluice");
        return Arrays.stream(m.group(1).trim().split("\\s+")).filter(f -> !f.isEmpty()).toList();
    }

    /**
     * @param dist the distribution folder
     * @return the default JVM flags of its {@code bin/sluice}
     * @throws IOException if the script cannot be read or has no such line
     */
    static List<String> read(Path dist) throws IOException
    {
        try
        {
            return parse(Files.readString(dist.resolve("bin/sluice"), StandardCharsets.UTF_8));
        }
        catch (IllegalArgumentException x)
        {
            throw new IOException(dist.resolve("bin/sluice") + ": " + x.getMessage(), x);
        }
    }
}
