package dev.sluice.support.json;

import dev.sluice.api.codec.RequestPeek;
import com.code_intelligence.jazzer.junit.FuzzTest;
import dev.sluice.api.testing.FuzzInputs;
import dev.sluice.support.json.Json;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.util.Arrays;

/**
 * Coverage-guided fuzzing of {@link JsonPeek}, the scan every OpenAI and Anthropic request body goes through first
 * (each dialect plugin also fuzzes its server binding's peek followed by its decoder). Seeds:
 * {@code src/test/resources/dev/sluice/api/codec/JsonPeekFuzzTestInputs/}. Every build runs them in regression mode;
 * {@code JAZZER_FUZZ=1} fuzzes (docs/testing.md, "Fuzz tests").
 */
@Timeout(10)
class JsonPeekFuzzTest
{
    /**
     * Any body is either peeked or rejected with a 4xx, and what is peeked has at the offsets found exactly the JSON
     * string of its model (a route alias is spliced there).
     */
    @FuzzTest
    void peekRejectsOnlyWithA4xxAndFindsTheModel(byte[] body) throws IOException
    {
        RequestPeek peek = FuzzInputs.acceptOrReject("peek", () -> JsonPeek.peek(body));
        if (peek == null)
            return;
        if (peek.model().isBlank())
            throw new AssertionError("a blank model was accepted");
        if (peek.modelStart() < 0 || peek.modelStart() >= peek.modelEnd() || peek.modelEnd() > body.length)
            throw new AssertionError("model offsets " + peek.modelStart() + ".." + peek.modelEnd() + " in " + body.length
                + " bytes");
        String atOffsets = Json.MAPPER.readValue(Arrays.copyOfRange(body, peek.modelStart(), peek.modelEnd()), String.class);
        if (!atOffsets.equals(peek.model()))
            throw new AssertionError("the offsets hold " + atOffsets + ", the peek found " + peek.model());
    }
}
