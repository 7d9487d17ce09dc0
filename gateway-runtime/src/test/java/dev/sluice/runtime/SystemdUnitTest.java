package dev.sluice.runtime;

import dev.sluice.runtime.internal.config.ConfigLoader;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/** deploy/systemd/sluice.service, read as the INI file it is: it starts bin/sluice and lets the drain finish. */
class SystemdUnitTest
{
    private static final Pattern SECONDS = Pattern.compile("(\\d+)(s|sec)?");

    /** Section → key → every value the key was given (systemd allows repeating a key). */
    private static Map<String, Map<String, List<String>>> unit;

    @BeforeAll
    static void read() throws IOException
    {
        unit = new LinkedHashMap<>();
        Map<String, List<String>> section = null;
        for (String raw : Files.readAllLines(DeployFiles.repositoryRoot().resolve("deploy/systemd/sluice.service")))
        {
            String line = raw.strip();
            if (line.isEmpty() || line.startsWith("#") || line.startsWith(";"))
                continue;
            if (line.startsWith("["))
            {
                assertThat(line).endsWith("]");
                section = unit.computeIfAbsent(line.substring(1, line.length() - 1), s -> new LinkedHashMap<>());
                continue;
            }
            assertThat(section).as("a key before any section: %s", line).isNotNull();
            int eq = line.indexOf('=');
            assertThat(eq).as("not key=value: %s", line).isPositive();
            section.computeIfAbsent(line.substring(0, eq).strip(), k -> new ArrayList<>()).add(line.substring(eq + 1).strip());
        }
    }

    private static String value(String section, String key)
    {
        List<String> values = unit.getOrDefault(section, Map.of()).get(key);
        assertThat(values).as("[%s] %s is set", section, key).isNotNull();
        return values.get(values.size() - 1);
    }

    @Test
    void execStartRunsBinSluiceWithAConfig()
    {
        assertThat(unit).containsKeys("Unit", "Service", "Install");
        String[] exec = value("Service", "ExecStart").split("\\s+");
        assertThat(exec[0]).startsWith("/").endsWith("/bin/sluice");
        assertThat(exec).containsSubsequence("run", "--config");
        assertThat(value("Service", "EnvironmentFile")).as("secrets come from a file, not the unit").startsWith("/");
    }

    @Test
    void systemdWaitsLongerThanTheShutdownGraceAfterSigterm()
    {
        assertThat(value("Service", "KillSignal")).isEqualTo("SIGTERM");
        Matcher timeout = SECONDS.matcher(value("Service", "TimeoutStopSec"));
        assertThat(timeout.matches()).as("TimeoutStopSec in seconds").isTrue();
        Duration grace = new ConfigLoader(Map.of("OPENAI_BASE_URL", "https://api.openai.com/v1", "OPENAI_API_KEY", "sk-test")::get)
            .load(DeployFiles.repositoryRoot().resolve("config/gateway.yaml")).grace();
        assertThat(Long.parseLong(timeout.group(1)))
            .isGreaterThan(Math.max(grace.toSeconds(), ConfigLoader.DEFAULT_GRACE.toSeconds()));
        assertThat(value("Service", "SuccessExitStatus")).as("a drained JVM ends with 128 + SIGTERM").contains("143");
        assertThat(value("Service", "Restart")).isEqualTo("on-failure");
    }

    @Test
    void itRunsAsADedicatedUserWithoutPrivileges()
    {
        assertThat(value("Service", "User")).isNotBlank().isNotEqualTo("root").isNotEqualTo("0");
        assertThat(value("Service", "NoNewPrivileges")).isEqualTo("yes");
        assertThat(value("Service", "ProtectSystem")).isIn("strict", "full");
        assertThat(value("Service", "ProtectHome")).isEqualTo("yes");
        assertThat(value("Service", "PrivateTmp")).isEqualTo("yes");
        assertThat(value("Service", "CapabilityBoundingSet")).isEmpty();
        assertThat(unit.get("Service")).as("the JIT writes the code it runs").doesNotContainKey("MemoryDenyWriteExecute");
    }
}
