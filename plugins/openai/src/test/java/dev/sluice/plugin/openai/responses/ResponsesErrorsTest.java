package dev.sluice.plugin.openai.responses;

import com.fasterxml.jackson.databind.JsonNode;
import dev.sluice.api.ErrorKind;
import dev.sluice.api.GatewayException;
import dev.sluice.api.model.StreamEvent;
import dev.sluice.api.model.Usage;
import dev.sluice.support.json.Json;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.charset.StandardCharsets;

import static org.assertj.core.api.Assertions.assertThat;

/** The codes a Responses client reads in a failed response and in an error event. */
class ResponsesErrorsTest
{
    @Test
    void aFailedResponseCarriesOnlyTheCodesOpenAiDefines() throws IOException
    {
        // Gemini's status of an overloaded provider: the SDKs reject a failed response with it.
        GatewayException gemini = new GatewayException(ErrorKind.UPSTREAM_UNAVAILABLE, 503, "upstream: overloaded", null,
            "UNAVAILABLE", null);
        assertThat(failedCode(gemini)).isEqualTo("server_error");
        assertThat(failedCode(new GatewayException(ErrorKind.RATE_LIMITED, 429, "slow down", null, "rate_limit_error",
            null))).isEqualTo("rate_limit_exceeded");
        assertThat(failedCode(new GatewayException(ErrorKind.GUARDRAIL_BLOCKED, "blocked"))).isEqualTo("invalid_prompt");
        assertThat(failedCode(new GatewayException(ErrorKind.UPSTREAM_ERROR, 502, "bad image", null, "invalid_image",
            null))).isEqualTo("invalid_image");
    }

    @Test
    void anErrorEventKeepsTheThrowersCode()
    {
        GatewayException gemini = new GatewayException(ErrorKind.UPSTREAM_UNAVAILABLE, 503, "upstream: overloaded", null,
            "UNAVAILABLE", null);
        assertThat(ResponsesErrors.code(gemini)).isEqualTo("UNAVAILABLE");
        assertThat(ResponsesErrors.code(new GatewayException(ErrorKind.GUARDRAIL_BLOCKED, "blocked")))
            .isEqualTo("invalid_request_error");
    }

    @Test
    void aFailedResponsesCodeIsReadBackAsTheSameKind()
    {
        assertThat(ResponseBodies.failure(Json.MAPPER.createObjectNode().put("code", "invalid_prompt")
            .put("message", "no")).kind()).isEqualTo(ErrorKind.INVALID_REQUEST);
        assertThat(ResponseBodies.failure(Json.MAPPER.createObjectNode().put("code", "rate_limit_exceeded")
            .put("message", "no")).kind()).isEqualTo(ErrorKind.RATE_LIMITED);
    }

    /** @return the {@code error.code} of the {@code response.failed} event the stream encoder writes */
    private static String failedCode(GatewayException error) throws IOException
    {
        ResponsesStreamEncoder encoder = new ResponsesStreamEncoder();
        encoder.encode(new StreamEvent.MessageStart("resp_1", "m", 1, Usage.ZERO));
        String text = StandardCharsets.UTF_8.decode(encoder.error(error)).toString();
        JsonNode failed = Json.MAPPER.readTree(text.substring(text.lastIndexOf("data: ") + "data: ".length()).trim());
        assertThat(failed.path("type").asText()).isEqualTo("response.failed");
        return failed.at("/response/error/code").asText();
    }
}
