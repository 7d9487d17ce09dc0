package dev.sluice.runtime;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The repository's deployment files as the deployment tests read them: the repository root, the JVM flags of
 * {@code bin/sluice}, and the sizes written in Kubernetes' and the JVM's notations.
 */
final class DeployFiles
{
    private static final Pattern DEFAULT_OPTS = Pattern.compile("(?m)^DEFAULT_OPTS=\"([^\"]*)\"");
    private static final Pattern XMX = Pattern.compile("(?:^|\\s)-Xmx(\\d+)([kKmMgG]?)(?:\\s|$)");
    private static final Pattern QUANTITY = Pattern.compile("(\\d+)(Ki|Mi|Gi|k|M|G)?");

    private DeployFiles()
    {
    }

    /** @return the repository root: the first folder above the module's (surefire's working directory) with the Dockerfile */
    static Path repositoryRoot()
    {
        for (Path dir = Path.of("").toAbsolutePath(); dir != null; dir = dir.getParent())
        {
            if (Files.isRegularFile(dir.resolve("pom.xml")) && Files.isRegularFile(dir.resolve("Dockerfile")))
                return dir;
        }
        throw new IllegalStateException("no folder with pom.xml and Dockerfile above " + Path.of("").toAbsolutePath());
    }

    /** @return the maximum heap of {@code bin/sluice}'s default JVM flags, in bytes */
    static long launcherMaxHeapBytes() throws IOException
    {
        String script = Files.readString(repositoryRoot().resolve("gateway-runtime/src/dist/bin/sluice"));
        Matcher opts = DEFAULT_OPTS.matcher(script);
        if (!opts.find())
            throw new AssertionError("bin/sluice sets no DEFAULT_OPTS");
        Matcher xmx = XMX.matcher(opts.group(1));
        if (!xmx.find())
            throw new AssertionError("bin/sluice's DEFAULT_OPTS set no -Xmx: " + opts.group(1));
        long value = Long.parseLong(xmx.group(1));
        return switch (xmx.group(2).toLowerCase(Locale.ROOT))
        {
            case "k" -> value << 10;
            case "m" -> value << 20;
            case "g" -> value << 30;
            default -> value;
        };
    }

    /** @return a Kubernetes memory quantity ({@code 512Mi}, {@code 1Gi}, {@code 200M}) in bytes */
    static long quantityBytes(String quantity)
    {
        Matcher m = QUANTITY.matcher(quantity);
        if (!m.matches())
            throw new AssertionError("quantity: " + quantity + " (expected: a number with Ki, Mi, Gi, k, M or G)");
        long value = Long.parseLong(m.group(1));
        String unit = m.group(2) == null ? "" : m.group(2);
        return switch (unit)
        {
            case "Ki" -> value << 10;
            case "Mi" -> value << 20;
            case "Gi" -> value << 30;
            case "k" -> value * 1_000L;
            case "M" -> value * 1_000_000L;
            case "G" -> value * 1_000_000_000L;
            default -> value;
        };
    }
}
