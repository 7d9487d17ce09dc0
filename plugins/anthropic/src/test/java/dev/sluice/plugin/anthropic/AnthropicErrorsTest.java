package dev.sluice.plugin.anthropic;

import dev.sluice.api.ErrorKind;
import dev.sluice.api.GatewayException;
import dev.sluice.support.dialect.UpstreamErrors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.nio.charset.StandardCharsets;

import static org.assertj.core.api.Assertions.assertThat;

class AnthropicErrorsTest
{
    private final AnthropicCodec codec = AnthropicCodec.INSTANCE;

    @ParameterizedTest
    @CsvSource({
        "INVALID_REQUEST, 400, invalid_request_error",
        "UNSUPPORTED, 400, invalid_request_error",
        "GUARDRAIL_BLOCKED, 400, invalid_request_error",
        "AUTHENTICATION, 401, authentication_error",
        "PERMISSION, 403, permission_error",
        "NOT_FOUND, 404, not_found_error",
        "REQUEST_TOO_LARGE, 413, request_too_large",
        "RATE_LIMITED, 429, rate_limit_error",
        "INTERNAL, 500, api_error",
        "UPSTREAM_ERROR, 502, api_error",
        "UPSTREAM_ERROR, 500, api_error",
        "UPSTREAM_UNAVAILABLE, 502, api_error",
        "UNAVAILABLE, 503, overloaded_error",
        "UNAVAILABLE, 529, overloaded_error",
        "UPSTREAM_TIMEOUT, 504, timeout_error"})
    void encodesEachKindAsAnthropicsErrorType(ErrorKind kind, int status, String type)
    {
        GatewayException error = new GatewayException(kind, status, "max_tokens: must be set (expected: an integer)",
            null, null,
            null);

        assertThat(new String(codec.encodeError(error), StandardCharsets.UTF_8)).isEqualTo(
            "{\"type\":\"error\",\"error\":{\"type\":\"" + type + "\",\"message\":\"max_tokens: must be set (expected: "
                + "an integer)\"}}");
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "400 | invalid_request_error | INVALID_REQUEST | 400",
        "404 | not_found_error | NOT_FOUND | 404",
        "413 | request_too_large | REQUEST_TOO_LARGE | 413",
        "422 | invalid_request_error | INVALID_REQUEST | 422",
        "429 | rate_limit_error | RATE_LIMITED | 429",
        "500 | api_error | UPSTREAM_ERROR | 500",
        "502 | api_error | UPSTREAM_ERROR | 502",
        "504 | timeout_error | UPSTREAM_TIMEOUT | 504",
        "529 | overloaded_error | UNAVAILABLE | 529",
        "402 | billing_error | UPSTREAM_ERROR | 502"})
    void decodesUpstreamErrorsKeepingTheStatus(int status, String type, ErrorKind kind, int answerStatus)
    {
        byte[] body = Fixtures.utf8("{\"type\":\"error\",\"error\":{\"type\":\"" + type + "\",\"message\":\"Something "
            + "about "
            + type + "\"},\"request_id\":\"req_011CSHoEeqs5C35K2UUqR7Fy\"}");

        GatewayException e = codec.decodeError(status, body);

        assertThat(e.kind()).isEqualTo(kind);
        assertThat(e.status()).isEqualTo(answerStatus);
        assertThat(e.getMessage()).isEqualTo("upstream: Something about " + type);
    }

    @Test
    void rejectedCredentialsAreTheGatewaysProblemAndTheirMessageIsNotRelayed()
    {
        for (int status : new int[]{401, 403})
        {
            GatewayException e = codec.decodeError(status, Fixtures.utf8("{\"type\":\"error\",\"error\":{\"type\":"
                + "\"authentication_error\",\"message\":\"invalid x-api-key sk-ant-api03-abc\"}}"));
            assertThat(e.kind()).isEqualTo(ErrorKind.UPSTREAM_ERROR);
            assertThat(e.status()).isEqualTo(502);
            assertThat(e.getMessage()).isEqualTo("upstream rejected the gateway's credentials")
                .doesNotContain("sk-ant");
        }
    }

    @Test
    void bodiesThatAreNotAnthropicErrorsStillMapByStatusAndLongMessagesAreCut()
    {
        GatewayException html = codec.decodeError(503, Fixtures.utf8("<html><body>Service Unavailable</body></html>"));
        assertThat(html.kind()).isEqualTo(ErrorKind.UPSTREAM_ERROR);
        assertThat(html.status()).isEqualTo(503);
        assertThat(html.getMessage()).isEqualTo("upstream answered with status 503");

        GatewayException redirect = codec.decodeError(302, new byte[0]);
        assertThat(redirect.status()).isEqualTo(502);

        String longMessage = "x".repeat(2000);
        GatewayException cut = codec.decodeError(400, Fixtures.utf8("{\"type\":\"error\",\"error\":{\"type\":"
            + "\"invalid_request_error\",\"message\":\"" + longMessage + "\"}}"));
        assertThat(cut.getMessage()).hasSize("upstream: ".length() + UpstreamErrors.MAX_MESSAGE + 3)
            .endsWith("...");
    }

    @Test
    void anEncodedErrorDecodesBackToTheSameKind()
    {
        for (ErrorKind kind : new ErrorKind[]{ErrorKind.INVALID_REQUEST, ErrorKind.NOT_FOUND,
            ErrorKind.REQUEST_TOO_LARGE,
            ErrorKind.RATE_LIMITED, ErrorKind.UPSTREAM_TIMEOUT})
        {
            GatewayException original = new GatewayException(kind, "what went wrong");
            GatewayException back = codec.decodeError(original.status(), codec.encodeError(original));
            assertThat(back.kind()).isEqualTo(kind);
            assertThat(back.status()).isEqualTo(original.status());
            assertThat(back.getMessage()).isEqualTo("upstream: what went wrong");
        }
        GatewayException overloaded = new GatewayException(ErrorKind.UNAVAILABLE, 529, "busy", null, null, null);
        assertThat(codec.decodeError(529, codec.encodeError(overloaded)).kind()).isEqualTo(ErrorKind.UNAVAILABLE);
    }

    @ParameterizedTest
    @CsvSource({
        "overloaded_error, UNAVAILABLE, 529",
        "rate_limit_error, RATE_LIMITED, 429",
        "invalid_request_error, INVALID_REQUEST, 400",
        "not_found_error, NOT_FOUND, 404",
        "request_too_large, REQUEST_TOO_LARGE, 413",
        "timeout_error, UPSTREAM_TIMEOUT, 504",
        "api_error, UPSTREAM_ERROR, 502",
        "billing_error, UPSTREAM_ERROR, 502"})
    void mapsInStreamErrorsByType(String type, ErrorKind kind, int status)
    {
        GatewayException e = AnthropicErrors.decodeStreamError(Fixtures.tree("{\"type\":\"error\",\"error\":"
            + "{\"type\":\"" + type
            + "\",\"message\":\"m\"}}"));
        assertThat(e.kind()).isEqualTo(kind);
        assertThat(e.status()).isEqualTo(status);
        assertThat(e.getMessage()).isEqualTo("upstream: m");
    }
}
