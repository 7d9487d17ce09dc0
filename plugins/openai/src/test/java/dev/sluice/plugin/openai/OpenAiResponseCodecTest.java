package dev.sluice.plugin.openai;

import dev.sluice.api.ErrorKind;
import dev.sluice.api.GatewayException;
import dev.sluice.api.model.ChatResponse;
import dev.sluice.api.model.ContentPart;
import dev.sluice.api.model.ChatResponse.StopReason;
import dev.sluice.api.model.Usage;
import dev.sluice.support.dialect.UpstreamErrors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

class OpenAiResponseCodecTest
{
    private final OpenAiCodec codec = OpenAiCodec.INSTANCE;

    private static byte[] utf8(String s)
    {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    @ParameterizedTest
    @ValueSource(strings = {"response-text.json", "response-parallel-tools.json", "response-usage-details.json"})
    void roundTripReproducesTheFixture(String fixture)
    {
        byte[] body = Fixtures.bytes(fixture);
        Fixtures.assertSameJson(codec.encodeResponse(codec.decodeResponse(body)), body);
    }

    @Test
    void decodesTextResponse()
    {
        ChatResponse r = codec.decodeResponse(Fixtures.bytes("response-text.json"));

        assertThat(r.id()).isEqualTo("chatcmpl-C3xk1vQpR7mZ2aL9sT4uW8yB0dE");
        assertThat(r.model()).isEqualTo("gpt-4o-mini-2024-07-18");
        assertThat(r.created()).isEqualTo(1754412345L);
        assertThat(r.content()).containsExactly(new ContentPart.Text("Elle arrivera à Liège jeudi matin, sauf retard à Anvers."));
        assertThat(r.stopReason()).isEqualTo(StopReason.END_TURN);
        assertThat(r.rawStopReason()).isEqualTo("stop");
        assertThat(r.usage()).isEqualTo(new Usage(87, 17, 0, 0, 0));
        assertThat(r.extensions()).containsKeys("service_tier", "system_fingerprint", "usage");
    }

    @Test
    void decodesParallelToolCallsInOrderWithExactArguments()
    {
        ChatResponse r = codec.decodeResponse(Fixtures.bytes("response-parallel-tools.json"));

        assertThat(r.content()).containsExactly(
            new ContentPart.ToolCall("call_8f3kQ2mWcY1bN0", "get_weather", "{\"city\": \"Paris\", \"unit\": \"celsius\"}"),
            new ContentPart.ToolCall("call_Zp91xAq7LrT3eE", "get_weather", "{\"city\":\"東京\",\"unit\":\"celsius\"}"));
        assertThat(r.stopReason()).isEqualTo(StopReason.TOOL_USE);
    }

    @Test
    void decodesCachedAndReasoningTokens()
    {
        ChatResponse r = codec.decodeResponse(Fixtures.bytes("response-usage-details.json"));

        assertThat(r.usage()).isEqualTo(new Usage(2231, 640, 1920, 0, 576));
        assertThat(r.stopReason()).isEqualTo(StopReason.MAX_TOKENS);
    }

    @Test
    void decodesReasoningContentAndRefusal()
    {
        ChatResponse r = codec.decodeResponse(utf8("""
            {"id":"x","object":"chat.completion","created":1,"model":"deepseek-reasoner","choices":[{"index":0,
             "message":{"role":"assistant","reasoning_content":"Compare 24 and 18.","content":"Tokyo."},
              "finish_reason":"stop"}]}"""));
        assertThat(r.content())
            .containsExactly(new ContentPart.Thinking("Compare 24 and 18.", null), new ContentPart.Text("Tokyo."));
        assertThat(r.usage()).isEqualTo(Usage.ZERO);

        ChatResponse refused = codec.decodeResponse(utf8("""
            {"id":"y","object":"chat.completion","created":1,"model":"gpt-4o","choices":[{"index":0,
             "message":{"role":"assistant","content":null,"refusal":"I can't help with that."},"finish_reason":"stop"}]}"""));
        assertThat(refused.content()).containsExactly(new ContentPart.Text("I can't help with that."));
    }

    @ParameterizedTest
    @CsvSource({"stop,END_TURN", "length,MAX_TOKENS", "tool_calls,TOOL_USE", "function_call,TOOL_USE",
        "content_filter,CONTENT_FILTER", "insufficient_system_resource,OTHER"})
    void mapsFinishReasonsAndWritesTheRawValueBack(String finishReason, StopReason expected)
    {
        String json = "{\"id\":\"x\",\"object\":\"chat.completion\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,"
            + "\"message\":{\"role\":\"assistant\",\"content\":\"a\"},\"finish_reason\":\"" + finishReason + "\"}]}";
        ChatResponse r = codec.decodeResponse(utf8(json));

        assertThat(r.stopReason()).isEqualTo(expected);
        assertThat(r.rawStopReason()).isEqualTo(finishReason);
        assertThat(Fixtures.tree(codec.encodeResponse(r)).at("/choices/0/finish_reason").textValue()).isEqualTo(finishReason);
    }

    @Test
    void encodesCanonicalResponseFromAnotherDialect()
    {
        ChatResponse r = new ChatResponse("msg_01", "claude-sonnet-4", List.of(new ContentPart.Thinking("think", "sig"),
            new ContentPart.Text("Part one. "), new ContentPart.Text("Part two."),
            new ContentPart.ToolCall("toolu_1", "f", "{}")), StopReason.TOOL_USE, "tool_use", new Usage(10, 5, 2, 3, 0), 1700000000, Map.of());

        Fixtures.assertSameJson(codec.encodeResponse(r), utf8("""
            {"id":"msg_01","object":"chat.completion","created":1700000000,"model":"claude-sonnet-4",
             "choices":[{"index":0,"message":{"role":"assistant","content":"Part one. Part two.","reasoning_content":"think",
               "tool_calls":[{"id":"toolu_1","type":"function","function":{"name":"f","arguments":"{}"}}],
               "refusal":null,"annotations":[]},"logprobs":null,"finish_reason":"tool_calls"}],
             "usage":{"prompt_tokens":10,"completion_tokens":5,"total_tokens":15,
               "prompt_tokens_details":{"cached_tokens":2},"completion_tokens_details":{"reasoning_tokens":0}}}"""));
    }

    @Test
    void rejectsInvalidUpstreamResponseAsUpstreamFailure()
    {
        GatewayException e = catchThrowableOfType(GatewayException.class,
            () -> codec.decodeResponse(utf8("<html>502 Bad Gateway</html>")));
        assertThat(e.kind()).isEqualTo(ErrorKind.UPSTREAM_UNAVAILABLE);
        assertThat(e.status()).isEqualTo(502);
        assertThat(e.getMessage()).startsWith("upstream sent an invalid response: upstream response is not valid JSON");

        GatewayException wrongType = catchThrowableOfType(GatewayException.class, () -> codec.decodeResponse(utf8(
            "{\"id\":\"x\",\"choices\":[{\"message\":{\"content\":42}}]}")));
        assertThat(wrongType.getMessage())
            .isEqualTo("upstream sent an invalid response: choices[0].message.content: value: 42 (expected: a string)");
        assertThat(wrongType.param()).as("param names client fields only").isNull();
    }

    @Test
    void scansUsageWithoutBuildingATree()
    {
        assertThat(codec.scanUsage(Fixtures.bytes("response-usage-details.json"))).isEqualTo(new Usage(2231, 640, 1920, 0, 576));
        assertThat(codec.scanUsage(Fixtures.bytes("response-text.json"))).isEqualTo(new Usage(87, 17, 0, 0, 0));
    }

    @Test
    void scanUsageLooksOnlyAtTheTopLevel()
    {
        String nested = "{\"choices\":[{\"message\":{\"content\":\"x\",\"usage\":{\"prompt_tokens\":99}}}],\"id\":\"a\"}";
        assertThat(codec.scanUsage(utf8(nested))).isNull();
        assertThat(codec.scanUsage(utf8("{\"usage\":null}"))).isNull();
        assertThat(codec.scanUsage(utf8("not json"))).isNull();
        assertThat(codec.scanUsage(utf8("{\"x\":[1,{\"usage\":{}}],\"usage\":{\"completion_tokens\":3,\"extra\":{\"a\":[1]}}}")))
            .isEqualTo(new Usage(0, 3, 0, 0, 0));
    }

    @Test
    void encodesErrorsInOpenAiEnvelope()
    {
        GatewayException notFound = new GatewayException(ErrorKind.NOT_FOUND, 404, "model: gpt-9 is not served by this gateway",
            "model",
            "model_not_found", null);
        Fixtures.assertSameJson(codec.encodeError(notFound), utf8("""
            {"error":{"message":"model: gpt-9 is not served by this gateway","type":"invalid_request_error",
             "param":"model","code":"model_not_found"}}"""));

        Fixtures.assertSameJson(codec.encodeError(new GatewayException(ErrorKind.RATE_LIMITED, "slow down")), utf8(
            "{\"error\":{\"message\":\"slow down\",\"type\":\"requests\",\"param\":null,\"code\":\"rate_limit_exceeded\"}}"));
        Fixtures.assertSameJson(codec.encodeError(new GatewayException(ErrorKind.AUTHENTICATION, "missing API key")), utf8(
            "{\"error\":{\"message\":\"missing API key\",\"type\":\"authentication_error\",\"param\":null,"
                + "\"code\":\"invalid_api_key\"}}"));
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', textBlock = """
        INVALID_REQUEST      | invalid_request_error
        UNSUPPORTED          | invalid_request_error
        GUARDRAIL_BLOCKED    | invalid_request_error
        NOT_FOUND            | invalid_request_error
        REQUEST_TOO_LARGE    | invalid_request_error
        AUTHENTICATION       | authentication_error
        PERMISSION           | permission_error
        RATE_LIMITED         | requests
        INTERNAL             | server_error
        UPSTREAM_ERROR       | server_error
        UPSTREAM_UNAVAILABLE | server_error
        UNAVAILABLE          | server_error
        UPSTREAM_TIMEOUT     | server_error
        """)
    void mapsEveryErrorKindToAnOpenAiType(ErrorKind kind, String type)
    {
        assertThat(Fixtures.tree(codec.encodeError(new GatewayException(kind, "m"))).at("/error/type").textValue())
            .isEqualTo(type);
    }

    @Test
    void decodesUpstreamErrorsKeepingStatusAndMessage()
    {
        GatewayException limited = codec.decodeError(429, utf8("""
            {"error":{"message":"Rate limit reached for gpt-4o in organization org-x on requests per min (RPM): Limit 500.",
             "type":"requests","param":null,"code":"rate_limit_exceeded"}}"""));
        assertThat(limited.kind()).isEqualTo(ErrorKind.RATE_LIMITED);
        assertThat(limited.status()).isEqualTo(429);
        assertThat(limited.getMessage()).startsWith("upstream: Rate limit reached for gpt-4o");
        assertThat(limited.code()).isEqualTo("rate_limit_exceeded");

        GatewayException badParam = codec.decodeError(400, utf8("""
            {"error":{"message":"Invalid value for 'temperature'.","type":"invalid_request_error","param":"temperature",
             "code":null}}"""));
        assertThat(badParam.kind()).isEqualTo(ErrorKind.INVALID_REQUEST);
        assertThat(badParam.status()).isEqualTo(400);
        assertThat(badParam.param()).isEqualTo("temperature");

        GatewayException missing = codec.decodeError(404, utf8("""
            {"error":{"message":"The model `gpt-9` does not exist or you do not have access to it.",
             "type":"invalid_request_error",
             "param":null,"code":"model_not_found"}}"""));
        assertThat(missing.kind()).isEqualTo(ErrorKind.NOT_FOUND);
        assertThat(missing.code()).isEqualTo("model_not_found");

        assertThat(codec.decodeError(422, utf8("{\"error\":{\"message\":\"bad\"}}")).kind()).isEqualTo(ErrorKind.INVALID_REQUEST);
        assertThat(codec.decodeError(422, utf8("{\"error\":{\"message\":\"bad\"}}")).status()).isEqualTo(422);
    }

    @ParameterizedTest
    @ValueSource(ints = {500, 502, 503, 504})
    void upstreamServerErrorsKeepTheirStatus(int status)
    {
        GatewayException e = codec.decodeError(status,
            utf8("{\"error\":{\"message\":\"The server had an error\",\"type\":\"server_error\"}}"));
        assertThat(e.kind()).isEqualTo(ErrorKind.UPSTREAM_ERROR);
        assertThat(e.status()).isEqualTo(status);
        assertThat(e.getMessage()).isEqualTo("upstream: The server had an error");
    }

    @ParameterizedTest
    @ValueSource(ints = {401, 403})
    void upstreamCredentialErrorsBecomeBadGatewayWithoutEchoingTheKey(int status)
    {
        GatewayException e = codec.decodeError(status, utf8("""
            {"error":{"message":"Incorrect API key provided: sk-proj-abc***********xyz.","type":"invalid_request_error",
             "param":null,"code":"invalid_api_key"}}"""));
        assertThat(e.kind()).isEqualTo(ErrorKind.UPSTREAM_ERROR);
        assertThat(e.status()).isEqualTo(502);
        assertThat(e.getMessage()).isEqualTo("upstream rejected the gateway's credentials").doesNotContain("sk-");
    }

    @Test
    void nonJsonErrorBodiesGetAGenericMessage()
    {
        GatewayException e = codec.decodeError(503, utf8("<html><body>Service Unavailable</body></html>"));
        assertThat(e.status()).isEqualTo(503);
        assertThat(e.getMessage()).isEqualTo("upstream answered with status 503");
        assertThat(codec.decodeError(500, new byte[0]).getMessage()).isEqualTo("upstream answered with status 500");
    }

    @Test
    void truncatesLongUpstreamMessages()
    {
        String longMessage = "x".repeat(5000);
        GatewayException e = codec.decodeError(400, utf8("{\"error\":{\"message\":\"" + longMessage + "\"}}"));
        assertThat(e.getMessage()).hasSize("upstream: ".length() + UpstreamErrors.MAX_MESSAGE + 3);
    }
}
