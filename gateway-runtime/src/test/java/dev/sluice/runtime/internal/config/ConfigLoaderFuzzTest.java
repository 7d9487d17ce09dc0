package dev.sluice.runtime.internal.config;

import com.code_intelligence.jazzer.junit.FuzzTest;
import dev.sluice.api.config.ConfigException;
import org.junit.jupiter.api.Timeout;

import java.nio.charset.StandardCharsets;
import java.util.Map;

/**
 * Coverage-guided fuzzing of {@link ConfigLoader#parse}: any text, as YAML and as JSON, becomes a validated config or
 * a {@link ConfigException} that names a path, never another exception. Seeds:
 * {@code src/test/resources/dev/sluice/runtime/internal/config/ConfigLoaderFuzzTestInputs/}. Every build runs them in
 * regression mode; {@code JAZZER_FUZZ=1} fuzzes (docs/testing.md, "Fuzz tests").
 */
@Timeout(10)
class ConfigLoaderFuzzTest
{
    private static final Map<String, String> ENV = Map.of("MOCK_URL", "http://127.0.0.1:1/v1", "KEY", "sk-test");

    private final ConfigLoader loader = new ConfigLoader(ENV::get);

    @FuzzTest
    void loadsOrRejectsWithConfigException(byte[] input)
    {
        String text = new String(input, StandardCharsets.UTF_8);
        for (boolean json : new boolean[]{false, true})
        {
            GatewayConfig config;
            try
            {
                config = loader.parse(text, json);
            }
            catch (ConfigException e)
            {
                if (e.path() == null || e.problem() == null || e.getMessage() == null)
                    throw new AssertionError("a ConfigException without path or problem", e);
                continue;
            }
            catch (RuntimeException | StackOverflowError e)
            {
                throw new AssertionError((json ? "JSON" : "YAML") + ": unexpected " + e, e);
            }
            if (config == null || config.bindings().isEmpty())
                throw new AssertionError("accepted a config without bindings: " + config);
        }
    }
}
