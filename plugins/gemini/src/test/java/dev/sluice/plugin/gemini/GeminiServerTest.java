package dev.sluice.plugin.gemini;

import dev.sluice.api.ErrorKind;
import dev.sluice.api.GatewayException;
import dev.sluice.api.binding.BodyLimits;
import dev.sluice.api.binding.ServerBinding.Endpoint;
import dev.sluice.api.binding.ServerBinding.Operation;
import dev.sluice.api.codec.RequestPeek;
import dev.sluice.api.exchange.Headers;
import dev.sluice.api.testing.TestExchange;
import dev.sluice.support.dialect.QueryParameters;
import dev.sluice.support.json.Json;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

class GeminiServerTest
{
    private static final byte[] BODY = Fixtures.utf8("{\"contents\":[{\"parts\":[{\"text\":\"hi\"}]}]}");

    private final GeminiServer server = new GeminiServer("/v1beta/models/", BodyLimits.NONE);

    private GatewayException peekFails(String path, String query, byte[] body)
    {
        return catchThrowableOfType(GatewayException.class, () -> server.peek(path, query, body));
    }

    @Test
    void readsModelAndStreamFromThePath()
    {
        assertThat(server.peek("/v1beta/models/gemini-2.5-flash:generateContent", null, BODY))
            .isEqualTo(new RequestPeek("gemini-2.5-flash", false, -1, -1));
        assertThat(server.peek("/v1beta/models/gemini-2.5-pro:streamGenerateContent", "alt=sse", BODY))
            .isEqualTo(new RequestPeek("gemini-2.5-pro", true, -1, -1));
        assertThat(server.peek("/v1beta/models/gemini-2.5-pro:streamGenerateContent", "key=abc&alt=sse", BODY).stream())
            .isTrue();
    }

    @Test
    void decodesModelsWithDotsSlashesAndOtherEscapes()
    {
        assertThat(server.peek("/v1beta/models/gemini-1.5-flash-001:generateContent", null, BODY).model())
            .isEqualTo("gemini-1.5-flash-001");
        assertThat(server.peek("/v1beta/models/tunedModels%2Fmy-model.v2:generateContent", null, BODY).model())
            .isEqualTo("tunedModels/my-model.v2");
        assertThat(server.peek("/v1beta/models/publishers/google/models/gemini-2.0-flash:generateContent", null, BODY)
            .model())
            .isEqualTo("publishers/google/models/gemini-2.0-flash");
        assertThat(server.peek("/v1beta/models/caf%C3%A9%3Abeta:generateContent", null, BODY).model())
            .isEqualTo("café:beta");
        assertThat(server.peek("/v1beta/models/a+b@001:generateContent", null, BODY).model()).isEqualTo("a+b@001");
    }

    @Test
    void servesTunedModelsBesideAModelsPrefixAndNamesThemTunedModelsId()
    {
        assertThat(server.peek("/v1beta/tunedModels/my-model:streamGenerateContent", "alt=sse", BODY))
            .isEqualTo(new RequestPeek("tunedModels/my-model", true, -1, -1));
        Endpoint count = server.endpoints().stream()
            .filter(e -> e.matches("POST", "/v1beta/tunedModels/my-model:countTokens")).findFirst().orElseThrow();
        assertThat(count.operation()).isEqualTo(Operation.COUNT_TOKENS);
        Endpoint get = server.endpoints().stream()
            .filter(e -> e.matches("GET", "/v1beta/tunedModels/my%20model")).findFirst().orElseThrow();
        assertThat(server.peek(get, "/v1beta/tunedModels/my%20model", null, new byte[0]).model())
            .isEqualTo("tunedModels/my model");
        assertThat(server.endpoints()).noneMatch(e -> e.matches("GET", "/v1beta/tunedModels"));

        // A prefix that is not Gemini's models collection has no tuned sibling.
        GeminiServer custom = new GeminiServer("/gemini/", BodyLimits.NONE);
        assertThat(custom.endpoints()).noneMatch(e -> e.path().contains("tunedModels"));
        assertThat(new GeminiServer("/proxy/v1beta/models/", BodyLimits.NONE).endpoints())
            .anyMatch(e -> e.matches("POST", "/proxy/v1beta/tunedModels/x:generateContent"));
    }

    @Test
    void refusesUnknownActionsNamingThem()
    {
        GatewayException e = peekFails("/v1beta/models/gemini-2.5-flash:countTokens", null, BODY);
        assertThat(e.kind()).isEqualTo(ErrorKind.NOT_FOUND);
        assertThat(e.status()).isEqualTo(404);
        assertThat(e.getMessage())
            .isEqualTo("action \"countTokens\" is not served by this gateway (expected: generateContent or"
                + " streamGenerateContent)");

        GatewayException none = peekFails("/v1beta/models/gemini-2.5-flash", null, BODY);
        assertThat(none.status()).isEqualTo(404);
        assertThat(none.getMessage()).isEqualTo("path: \"/v1beta/models/gemini-2.5-flash\" names no action (expected:"
            + " /v1beta/models/{model}:generateContent or :streamGenerateContent)");
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "alt=json", "key=abc", "alt=SSE"})
    void refusesAStreamWithoutAltSse(String query)
    {
        GatewayException e = peekFails("/v1beta/models/gemini-2.5-flash:streamGenerateContent", query, BODY);
        assertThat(e.kind()).isEqualTo(ErrorKind.INVALID_REQUEST);
        assertThat(e.status()).isEqualTo(400);
        assertThat(e.getMessage())
            .isEqualTo("alt: streamGenerateContent requires alt=sse (the gateway streams server-sent events only)");
        assertThat(e.param()).isEqualTo("alt");
    }

    @Test
    void refusesAMissingModelAndBrokenEscapes()
    {
        GatewayException missing = peekFails("/v1beta/models/:generateContent", null, BODY);
        assertThat(missing.status()).isEqualTo(400);
        assertThat(missing.getMessage())
            .isEqualTo("model: the path names no model (expected: /v1beta/models/{model}:generateContent)");
        GatewayException broken = peekFails("/v1beta/models/gem%2:generateContent", null, BODY);
        assertThat(broken.status()).isEqualTo(400);
        assertThat(broken.getMessage())
            .isEqualTo("model: \"gem%2\" has a broken percent-encoding (expected: %XX escapes)");
    }

    @Test
    void checksTheBodyAfterThePath()
    {
        GatewayException array = peekFails("/v1beta/models/m:generateContent", null, Fixtures.utf8("[1]"));
        assertThat(array.kind()).isEqualTo(ErrorKind.INVALID_REQUEST);
        assertThat(array.getMessage()).isEqualTo("request body: value: an array (expected: a JSON object)");
        assertThat(peekFails("/v1beta/models/m:generateContent", null, new byte[0]).getMessage())
            .isEqualTo("request body is empty (expected: a JSON object)");
        assertThat(peekFails("/v1beta/models/m:generateContent", null, Fixtures.utf8("{\"contents\":[}")).getMessage())
            .startsWith("request body is not valid JSON:");
        assertThat(peekFails("/v1beta/models/m:generateContent", null, Fixtures.utf8("{} {}")).getMessage())
            .isEqualTo("request body is not valid JSON: unexpected content after the end of the document at line 1,"
                + " column 4");
        String deep = "[".repeat(Json.MAX_DEPTH + 5) + "]".repeat(Json.MAX_DEPTH + 5);
        assertThat(peekFails("/v1beta/models/m:generateContent", null, Fixtures.utf8("{\"x\":" + deep + "}"))
            .getMessage())
            .startsWith("request body is nested too deeply");
        // The path is judged first: a wrong action is a 404 whatever the body.
        assertThat(peekFails("/v1beta/models/m:embedContent", null, Fixtures.utf8("[1]")).status()).isEqualTo(404);
    }

    @Test
    void refusesContentsThatCannotBeValidAfterTheSyntax()
    {
        String path = "/v1beta/models/m:generateContent";
        assertThat(peekFails(path, null, Fixtures.utf8("{\"contents\":\"hi\"}")).getMessage())
            .isEqualTo("contents: value: \"hi\" (expected: a non-empty array of contents)");
        assertThat(peekFails(path, null, Fixtures.utf8("{\"contents\":[]}")).getMessage())
            .isEqualTo("contents: must not be empty (expected: at least one content)");
        assertThat(peekFails(path, null, Fixtures.utf8("{\"generationConfig\":{}}")).getMessage())
            .isEqualTo("contents: must be set (expected: a non-empty array of contents)");
        assertThat(peekFails(path, null, Fixtures.utf8("{\"contents\":null}")).getMessage())
            .isEqualTo("contents: must be set (expected: a non-empty array of contents)");
        assertThat(peekFails(path, null, Fixtures.utf8("{\"contents\":[{\"parts\":[]},7]}")).getMessage())
            .isEqualTo("contents[1]: value: 7 (expected: an object)");
        assertThat(peekFails(path, null, Fixtures.utf8("{\"contents\":[{}],\"contents\":[{}]}")).getMessage())
            .isEqualTo("contents: appears twice (expected: one contents field)");
        GatewayException syntaxFirst = peekFails(path, null, Fixtures.utf8("{\"contents\":[],\"x\":}"));
        assertThat(syntaxFirst.getMessage()).startsWith("request body is not valid JSON:");
        assertThat(syntaxFirst.status()).isEqualTo(400);
    }

    @Test
    void codecPeekOnlyChecksTheBody()
    {
        assertThat(GeminiCodec.INSTANCE.peek(BODY)).isEqualTo(new RequestPeek("", false, -1, -1));
        byte[] body = Fixtures.bytes("request-tools.json");
        assertThat(GeminiCodec.INSTANCE.rewriteModel(body, GeminiCodec.INSTANCE.peek(body), "other")).isSameAs(body);
    }

    @Test
    void clientKeyComesFromTheHeaderThenTheQuery()
    {
        Headers goog = headers(new TestExchange("m").header("x-goog-api-key", " AIza-header "));
        assertThat(server.clientKey(goog, "key=AIza-query")).isEqualTo("AIza-header");
        Headers none = headers(new TestExchange("m"));
        assertThat(server.clientKey(none, "alt=sse&key=AIza%2Bquery")).isEqualTo("AIza+query");
        Headers bearer = headers(new TestExchange("m").header("Authorization", "Bearer sk-1"));
        assertThat(server.clientKey(bearer, "alt=sse")).isNull();
        assertThat(server.clientKey(headers(new TestExchange("m")), null)).isNull();
        assertThat(server.clientKey(headers(new TestExchange("m")), "key=")).isNull();
    }

    private static Headers headers(TestExchange exchange)
    {
        return exchange.headers();
    }

    @Test
    void findsQueryParametersExactly()
    {
        assertThat(QueryParameters.first("alt=sse", "alt")).isEqualTo("sse");
        assertThat(QueryParameters.first("salt=sse&alt=json", "alt")).isEqualTo("json");
        assertThat(QueryParameters.first("alt", "alt")).isEmpty();
        assertThat(QueryParameters.first("a=1&&b=2", "b")).isEqualTo("2");
        assertThat(QueryParameters.first("x=%zz&key=k", "x")).isNull();
    }
}
