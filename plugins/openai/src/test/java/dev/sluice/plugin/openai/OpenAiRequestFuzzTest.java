package dev.sluice.plugin.openai;

import com.code_intelligence.jazzer.junit.FuzzTest;
import dev.sluice.api.binding.BodyLimits;
import dev.sluice.api.binding.ServerBinding;
import dev.sluice.api.testing.FuzzInputs;
import org.junit.jupiter.api.Timeout;

/**
 * Coverage-guided fuzzing of the OpenAI dialect's request path: bodies as the server binding receives them, through its
 * peek and, when the peek accepts, the codec's decoder. Seeds:
 * {@code src/test/resources/dev/sluice/plugin/openai/OpenAiRequestFuzzTestInputs/}.
 * Every build runs them in regression mode; {@code JAZZER_FUZZ=1} fuzzes (docs/testing.md, "Fuzz tests").
 */
@Timeout(10)
class OpenAiRequestFuzzTest
{
    private static final String PATH = "/v1/chat/completions";
    private static final String QUERY = null;

    private final ServerBinding server = new OpenAiServerFactory().create("/v1/chat/completions", BodyLimits.NONE);

    /** {@link FuzzInputs#assertRequestPath}: peek, decode, alias splice and re-encoding hold for any body. */
    @FuzzTest
    void whatThePeekAcceptsDecodes(byte[] body)
    {
        FuzzInputs.assertRequestPath(server, PATH, QUERY, body);
    }
}
