package dev.sluice.plugin.gemini;

import com.code_intelligence.jazzer.junit.FuzzTest;
import dev.sluice.api.codec.DialectCodec;
import dev.sluice.api.codec.StreamDecoder;
import dev.sluice.api.model.StreamEvent;
import dev.sluice.api.testing.FuzzInputs;
import org.junit.jupiter.api.Timeout;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

/**
 * Coverage-guided fuzzing of the Gemini dialect's stream decoder on upstream bytes in arbitrary chunk splits. Seeds:
 * {@code src/test/resources/dev/sluice/plugin/gemini/GeminiStreamFuzzTestInputs/} (first byte: the chunk split, see
 * {@link FuzzInputs#chunks}). Every build runs them in regression mode; {@code JAZZER_FUZZ=1} fuzzes (docs/testing.md,
 * "Fuzz tests").
 */
@Timeout(10)
class GeminiStreamFuzzTest
{
    private final DialectCodec codec = GeminiCodec.INSTANCE;

    /**
     * Upstream stream bytes, split anywhere, decode into canonical events (none {@code null}, none after an error) or
     * fail with the documented {@code UPSTREAM_UNAVAILABLE}; nothing else escapes.
     */
    @FuzzTest
    void streamDecoderFailsOnlyAsDocumented(byte[] input)
    {
        StreamDecoder decoder = codec.newStreamDecoder();
        List<StreamEvent> events = new ArrayList<>();
        for (ByteBuffer chunk : FuzzInputs.chunks(input))
        {
            try
            {
                decoder.decode(chunk, events::add);
            }
            catch (RuntimeException e)
            {
                FuzzInputs.assertUpstreamFailure(e);
                break;
            }
        }
        FuzzInputs.assertEmittedSanely(events);
    }
}
