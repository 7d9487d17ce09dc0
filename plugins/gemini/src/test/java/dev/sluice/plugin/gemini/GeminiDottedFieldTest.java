package dev.sluice.plugin.gemini;

import dev.sluice.api.ErrorKind;
import dev.sluice.api.GatewayException;
import dev.sluice.api.codec.RequestPeek;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Found by {@code GeminiRequestFuzzTest}: a top-level field named like an extension path must not reach the provider. */
class GeminiDottedFieldTest
{
    @Test
    void rejectsATopLevelFieldNamedLikeANestedPath()
    {
        byte[] body = ("{\"contents\":[{\"role\":\"user\",\"parts\":[{\"text\":\"Hi\"}]}],"
            + "\"toolConfig.functionCallingConfig.allowedFunctionNames\":[{\"not\":\"a name\"}]}")
            .getBytes(StandardCharsets.UTF_8);

        assertThatThrownBy(() -> GeminiCodec.INSTANCE.decodeRequest(body, new RequestPeek("gemini-2.5-flash", false, -1, -1)))
            .isInstanceOfSatisfying(GatewayException.class, e ->
            {
                if (e.kind() != ErrorKind.INVALID_REQUEST)
                    throw new AssertionError(e.kind());
            })
            .hasMessage("toolConfig.functionCallingConfig.allowedFunctionNames: is not a Gemini request field (expected: a field"
                + " name without '.')");
    }
}
