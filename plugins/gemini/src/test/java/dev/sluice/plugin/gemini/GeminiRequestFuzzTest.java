package dev.sluice.plugin.gemini;

import com.code_intelligence.jazzer.junit.FuzzTest;
import dev.sluice.api.binding.BodyLimits;
import dev.sluice.api.binding.ServerBinding;
import dev.sluice.api.testing.FuzzInputs;
import org.junit.jupiter.api.Timeout;

/**
 * Coverage-guided fuzzing of the Gemini dialect's request path: bodies as the server binding receives them, through its
 * peek and, when the peek accepts, the codec's decoder. Seeds:
 * {@code src/test/resources/dev/sluice/plugin/gemini/GeminiRequestFuzzTestInputs/}.
 * Every build runs them in regression mode; {@code JAZZER_FUZZ=1} fuzzes (docs/testing.md, "Fuzz tests").
 */
@Timeout(10)
class GeminiRequestFuzzTest
{
    private static final String PATH = "/v1beta/models/gemini-fuzz:generateContent";
    private static final String QUERY = null;

    private final ServerBinding server = new GeminiServer("/v1beta/models/", BodyLimits.NONE);

    /** {@link FuzzInputs#assertRequestPath}: peek, decode, alias splice and re-encoding hold for any body. */
    @FuzzTest
    void whatThePeekAcceptsDecodes(byte[] body)
    {
        FuzzInputs.assertRequestPath(server, PATH, QUERY, body);
    }
}
