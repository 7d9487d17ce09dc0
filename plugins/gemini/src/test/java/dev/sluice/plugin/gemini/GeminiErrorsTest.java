package dev.sluice.plugin.gemini;

import dev.sluice.api.ErrorKind;
import dev.sluice.api.GatewayException;
import dev.sluice.support.dialect.UpstreamErrors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import static org.assertj.core.api.Assertions.assertThat;

class GeminiErrorsTest
{
    private final GeminiCodec codec = GeminiCodec.INSTANCE;

    @ParameterizedTest
    @CsvSource({
        "INVALID_REQUEST, 400, INVALID_ARGUMENT",
        "UNSUPPORTED, 400, INVALID_ARGUMENT",
        "GUARDRAIL_BLOCKED, 400, INVALID_ARGUMENT",
        "AUTHENTICATION, 401, UNAUTHENTICATED",
        "PERMISSION, 403, PERMISSION_DENIED",
        "NOT_FOUND, 404, NOT_FOUND",
        "REQUEST_TOO_LARGE, 413, INVALID_ARGUMENT",
        "RATE_LIMITED, 429, RESOURCE_EXHAUSTED",
        "INTERNAL, 500, INTERNAL",
        "UPSTREAM_ERROR, 502, UNAVAILABLE",
        "UPSTREAM_UNAVAILABLE, 502, UNAVAILABLE",
        "UNAVAILABLE, 503, UNAVAILABLE",
        "UPSTREAM_TIMEOUT, 504, DEADLINE_EXCEEDED"})
    void encodesEveryKindInGooglesEnvelope(ErrorKind kind, int status, String rpcStatus)
    {
        byte[] body = codec.encodeError(new GatewayException(kind, "what to fix"));
        Fixtures.assertSameJson(body, Fixtures.utf8(
            "{\"error\":{\"code\":" + status + ",\"message\":\"what to fix\",\"status\":\"" + rpcStatus + "\"}}"));
    }

    @Test
    void encodesTheParamAsAFieldViolationAndKeepsAnRpcStatusCode()
    {
        String message = "contents[0].role: value: 7 (expected: a string)";
        GatewayException e = new GatewayException(ErrorKind.INVALID_REQUEST, 400, message, "contents[0].role", null,
            null);
        Fixtures.assertSameJson(codec.encodeError(e), Fixtures.utf8("""
            {"error":{"code":400,"message":"%1$s","status":"INVALID_ARGUMENT",
              "details":[{"@type":"type.googleapis.com/google.rpc.BadRequest",
              "fieldViolations":[{"field":"contents[0].role","description":"%1$s"}]}]}}""".formatted(message)));

        GatewayException upstream = new GatewayException(ErrorKind.INVALID_REQUEST, 400,
            "upstream: User location is not supported for the API use.", null, "FAILED_PRECONDITION", null);
        assertThat(Fixtures.tree(codec.encodeError(upstream)).at("/error/status").textValue())
            .isEqualTo("FAILED_PRECONDITION");
        GatewayException openAiCode = new GatewayException(ErrorKind.RATE_LIMITED, 429, "slow down", null,
            "rate_limit_exceeded", null);
        assertThat(Fixtures.tree(codec.encodeError(openAiCode)).at("/error/status").textValue())
            .isEqualTo("RESOURCE_EXHAUSTED");
    }

    @Test
    void decodesUpstreamErrorsKeepingStatusAndMessage()
    {
        GatewayException e = codec.decodeError(429, Fixtures.utf8("""
            {"error":{"code":429,
              "message":"You exceeded your current quota, please check your plan and billing details.",
              "status":"RESOURCE_EXHAUSTED",
              "details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"27s"}]}}"""));
        assertThat(e.kind()).isEqualTo(ErrorKind.RATE_LIMITED);
        assertThat(e.status()).isEqualTo(429);
        assertThat(e.code()).isEqualTo("RESOURCE_EXHAUSTED");
        assertThat(e.getMessage())
            .isEqualTo("upstream: You exceeded your current quota, please check your plan and billing details.");

        GatewayException notFound = codec.decodeError(404, Fixtures.utf8("{\"error\":{\"code\":404,"
            + "\"message\":\"models/gemini-9 is not found for API version v1beta\",\"status\":\"NOT_FOUND\"}}"));
        assertThat(notFound.kind()).isEqualTo(ErrorKind.NOT_FOUND);
        assertThat(notFound.status()).isEqualTo(404);

        GatewayException invalid = codec.decodeError(400, Fixtures.utf8("[{\"error\":{\"code\":400,"
            + "\"message\":\"Invalid JSON payload received.\",\"status\":\"INVALID_ARGUMENT\"}}]"));
        assertThat(invalid.kind()).isEqualTo(ErrorKind.INVALID_REQUEST);
        assertThat(invalid.getMessage()).isEqualTo("upstream: Invalid JSON payload received.");

        GatewayException overloaded = codec.decodeError(503, Fixtures.utf8("{\"error\":{\"code\":503,"
            + "\"message\":\"The model is overloaded.\",\"status\":\"UNAVAILABLE\"}}"));
        assertThat(overloaded.kind()).isEqualTo(ErrorKind.UPSTREAM_ERROR);
        assertThat(overloaded.status()).isEqualTo(503);
    }

    @Test
    void aRejectedGatewayKeyIsA502ThatDoesNotRelayTheUpstreamWords()
    {
        GatewayException invalidKey = codec.decodeError(400, Fixtures.utf8("""
            {"error":{"code":400,"message":"API key not valid. Please pass a valid API key.",
              "status":"INVALID_ARGUMENT",
              "details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"API_KEY_INVALID",
                          "domain":"googleapis.com","metadata":{"service":"generativelanguage.googleapis.com"}}]}}"""));
        assertThat(invalidKey.status()).isEqualTo(502);
        assertThat(invalidKey.kind()).isEqualTo(ErrorKind.UPSTREAM_ERROR);
        assertThat(invalidKey.getMessage()).isEqualTo("upstream rejected the gateway's credentials");

        assertThat(codec.decodeError(403, Fixtures.utf8("{\"error\":{\"code\":403,\"message\":\"Method doesn't allow"
            + " unregistered callers\",\"status\":\"PERMISSION_DENIED\"}}")).status()).isEqualTo(502);
        assertThat(codec.decodeError(401, new byte[0]).getMessage())
            .isEqualTo("upstream rejected the gateway's credentials");
    }

    @Test
    void capsLongMessagesAndCopesWithBodiesThatAreNotGoogles()
    {
        GatewayException longOne = codec.decodeError(500, Fixtures.utf8("{\"error\":{\"code\":500,\"message\":\""
            + "x".repeat(5000) + "\",\"status\":\"INTERNAL\"}}"));
        assertThat(longOne.getMessage()).hasSize("upstream: ".length() + UpstreamErrors.MAX_MESSAGE + 3);

        GatewayException html = codec.decodeError(502, Fixtures.utf8("<html><body>Bad Gateway</body></html>"));
        assertThat(html.status()).isEqualTo(502);
        assertThat(html.getMessage()).isEqualTo("upstream answered with status 502");

        GatewayException redirect = codec.decodeError(302, new byte[0]);
        assertThat(redirect.status()).isEqualTo(502);
    }

    @Test
    void decodesStreamErrorsByTheirRpcStatus()
    {
        GatewayException quota = GeminiErrors.decodeStreamError(Fixtures.tree(
            "{\"code\":429,\"message\":\"Resource has been exhausted\",\"status\":\"RESOURCE_EXHAUSTED\"}"));
        assertThat(quota.kind()).isEqualTo(ErrorKind.RATE_LIMITED);
        assertThat(quota.status()).isEqualTo(429);

        GatewayException timeout = GeminiErrors.decodeStreamError(
            Fixtures.tree("{\"message\":\"late\",\"status\":\"DEADLINE_EXCEEDED\"}"));
        assertThat(timeout.kind()).isEqualTo(ErrorKind.UPSTREAM_TIMEOUT);
        assertThat(timeout.status()).isEqualTo(504);

        GatewayException internal = GeminiErrors.decodeStreamError(Fixtures.tree("{\"code\":500,"
            + "\"message\":\"An internal error has occurred.\",\"status\":\"INTERNAL\"}"));
        assertThat(internal.kind()).isEqualTo(ErrorKind.UPSTREAM_ERROR);
        assertThat(internal.status()).isEqualTo(500);
        assertThat(internal.code()).isEqualTo("INTERNAL");
    }
}
