package dev.sluice.plugin.gemini;

import com.code_intelligence.jazzer.junit.FuzzTest;
import dev.sluice.api.binding.ServerBinding;
import dev.sluice.api.codec.DialectCodec;
import dev.sluice.api.codec.RequestPeek;
import dev.sluice.api.model.ChatRequest;
import dev.sluice.api.testing.FuzzInputs;
import org.junit.jupiter.api.Timeout;

import java.nio.charset.StandardCharsets;

/**
 * Coverage-guided fuzzing of the Gemini dialect's request path: bodies as the server binding receives them, through its
 * peek and, when the peek accepts, the codec's decoder. Seeds:
 * {@code src/test/resources/dev/sluice/plugin/gemini/GeminiRequestFuzzTestInputs/}.
 * Every build runs them in regression mode; {@code JAZZER_FUZZ=1} fuzzes (README "Fuzz tests").
 */
@Timeout(10)
class GeminiRequestFuzzTest
{
    private static final String PATH = "/v1beta/models/gemini-fuzz:generateContent";
    private static final String QUERY = null;

    private final ServerBinding server = new GeminiServer("/v1beta/models/");
    private final DialectCodec codec = server.codec();

    /**
     * The server binding's peek rejects a body only with a 4xx; whatever it accepts the codec decodes or rejects with
     * a 4xx, never another exception; a route alias spliced in keeps the body acceptable; and a request the codec
     * decoded and encodes again in its own dialect is accepted by its own peek and decoder.
     */
    @FuzzTest
    void whatThePeekAcceptsDecodes(byte[] body)
    {
        RequestPeek peek = FuzzInputs.acceptOrReject("peek", () -> server.peek(PATH, QUERY, body));
        if (peek == null)
            return;
        ChatRequest request = FuzzInputs.acceptOrReject("decodeRequest", () -> codec.decodeRequest(body, peek));
        byte[] aliased = codec.rewriteModel(body, peek, "fuzz-alias");
        RequestPeek aliasedPeek = FuzzInputs.acceptOrReject("peek after rewriteModel",
            () -> server.peek(PATH, QUERY, aliased));
        if (aliasedPeek == null || aliasedPeek.stream() != peek.stream())
            throw new AssertionError("rewriteModel broke an accepted body: " + aliasedPeek);
        if (request == null)
            return;
        byte[] encoded = FuzzInputs.acceptOrReject("encodeRequest", () -> codec.encodeRequest(request));
        if (encoded == null)
            return;
        try
        {
            codec.decodeRequest(encoded, server.peek(PATH, QUERY, encoded));
        }
        catch (RuntimeException e)
        {
            throw new AssertionError("the codec rejects its own encoding " + new String(encoded, StandardCharsets.UTF_8)
                + " of an accepted request: " + e.getMessage(), e);
        }
    }
}
