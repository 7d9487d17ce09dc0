package dev.sluice.runtime;

import com.anthropic.client.AnthropicClient;
import com.anthropic.client.okhttp.AnthropicOkHttpClient;
import com.anthropic.errors.AnthropicServiceException;
import com.anthropic.models.ErrorType;
import com.anthropic.models.messages.MessageCreateParams;
import com.anthropic.models.messages.MessageParam;
import com.fasterxml.jackson.databind.JsonNode;
import com.openai.client.OpenAIClient;
import com.openai.client.okhttp.OpenAIOkHttpClient;
import com.openai.core.JsonValue;
import com.openai.errors.OpenAIServiceException;
import com.openai.models.chat.completions.ChatCompletionCreateParams;
import dev.sluice.support.json.Json;
import dev.sluice.mock.MockProvider;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/**
 * Requests that cannot be valid and requests that break HTTP, against the OpenAI, Anthropic and Gemini endpoints: each
 * is answered with a JSON error in the dialect of the path (OpenAI-shaped where no dialect applies), a message that
 * says what to fix, no stack trace and no echo of the client's key, and the provider never sees it. Bodies that cannot
 * be valid are sent through the official SDKs where they can express them; protocol errors over raw sockets.
 */
class BadInputTest
{
    private static final String OPENAI_KEY = "sk-client-secret-openai-0451";
    private static final String ANTHROPIC_KEY = "sk-ant-client-secret-0451";
    private static final String GEMINI_KEY = "client-secret-gemini-0451";
    private static final String CHAT = "/v1/chat/completions";
    private static final String MESSAGES = "/v1/messages";
    private static final String GEMINI = "/v1beta/models/gemini/g:generateContent";
    private static final String OPENAI_BODY =
        "{\"model\":\"openai/gpt-4o\",\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]}";
    private static final String ANTHROPIC_BODY =
        "{\"model\":\"anthropic/claude\",\"max_tokens\":16,\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]}";
    private static final String GEMINI_BODY = "{\"contents\":[{\"role\":\"user\",\"parts\":[{\"text\":\"Hi\"}]}]}";

    @TempDir
    static Path dir;

    private static MockProvider mock;
    private static GatewayHarness gateway;
    private static OpenAIClient openai;
    private static AnthropicClient anthropic;
    private static HttpClient jdk;

    static String config(String mockRoot)
    {
        return """
            listen: { host: 127.0.0.1, port: 0 }
            bindings:
              north_openai: { type: openai, kind: server, exit: router }
              north_anthropic: { type: anthropic, kind: server, exit: router }
              north_gemini: { type: gemini, kind: server, exit: router }
              router:
                type: router
                kind: proxy
                routes:
                  - when: [ { model: "openai/*" } ]
                    exit: south_openai
                  - when: [ { model: "anthropic/*" } ]
                    exit: south_anthropic
                  - when: [ { model: "gemini/*" } ]
                    exit: south_gemini
              south_openai:
                type: openai
                kind: client
                options: { url: "%1$s/v1", api_key: "${{env.UPSTREAM_KEY}}" }
              south_anthropic:
                type: anthropic
                kind: client
                options: { url: "%1$s/v1", api_key: "${{env.UPSTREAM_KEY}}" }
              south_gemini:
                type: gemini
                kind: client
                options: { url: "%1$s/v1beta", api_key: "${{env.UPSTREAM_KEY}}" }
            """.formatted(mockRoot);
    }

    @BeforeAll
    static void start() throws Exception
    {
        mock = MockProvider.builder().start();
        gateway = GatewayHarness.start(dir, config("http://127.0.0.1:" + mock.port()), TestDist.plugins(),
            Map.of("UPSTREAM_KEY", "upstream-key"));
        openai = OpenAIOkHttpClient.builder().baseUrl(gateway.url("/v1")).apiKey(OPENAI_KEY).maxRetries(0)
            .timeout(Duration.ofSeconds(20)).build();
        anthropic = AnthropicOkHttpClient.builder().baseUrl(gateway.url("")).apiKey(ANTHROPIC_KEY).maxRetries(0)
            .timeout(Duration.ofSeconds(20)).build();
        jdk = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).connectTimeout(Duration.ofSeconds(10)).build();
    }

    @AfterAll
    static void stop() throws Exception
    {
        try
        {
            if (openai != null)
                openai.close();
            if (anthropic != null)
                anthropic.close();
            if (gateway != null)
                gateway.close();
        }
        finally
        {
            if (mock != null)
                mock.close();
        }
        assertThat(dev.sluice.runtime.internal.http.OnceCallback.doubleCompletions()).as("handler callbacks completed twice")
            .isZero();
    }

    @BeforeEach
    void clearRecording()
    {
        mock.clearRecords();
    }

    @AfterEach
    void nothingReachedTheProvider()
    {
        assertThat(mock.requests()).as("requests the provider saw").isEmpty();
    }

    // --- 1. bodies that cannot be valid ----------------------------------------------------------------------------

    @Test
    void openAiMessagesAsAStringOrEmptyAre400WithoutUpstreamCall()
    {
        OpenAIServiceException string = catchThrowableOfType(OpenAIServiceException.class, () -> openai.chat().completions()
            .create(ChatCompletionCreateParams.builder().model("openai/gpt-4o").messages(JsonValue.from("hi")).build()));
        assertThat(string.statusCode()).isEqualTo(400);
        assertThat(string.type()).hasValue("invalid_request_error");
        assertThat(string.param()).hasValue("messages");
        assertThat(string.getMessage()).contains("messages: value: \"hi\" (expected: a non-empty array of messages)");

        OpenAIServiceException empty = catchThrowableOfType(OpenAIServiceException.class, () -> openai.chat().completions()
            .create(ChatCompletionCreateParams.builder().model("openai/gpt-4o").messages(List.of()).build()));
        assertThat(empty.statusCode()).isEqualTo(400);
        assertThat(empty.getMessage()).contains("messages: must not be empty (expected: at least one message)");

        OpenAIServiceException noRole = catchThrowableOfType(OpenAIServiceException.class, () -> openai.chat().completions()
            .create(ChatCompletionCreateParams.builder().model("openai/gpt-4o")
                .messages(JsonValue.from(List.of(Map.of("content", "hi")))).build()));
        assertThat(noRole.statusCode()).isEqualTo(400);
        assertThat(noRole.getMessage()).contains("messages[0].role: must be set (expected: a string)");
        assertNoEcho(String.valueOf(noRole.body()));
    }

    @Test
    void anthropicMessagesAsAStringOrEmptyOrMaxTokensNotAnIntegerAre400WithoutUpstreamCall()
    {
        AnthropicServiceException string = catchThrowableOfType(AnthropicServiceException.class, () -> anthropic.messages()
            .create(MessageCreateParams.builder().model("anthropic/claude").maxTokens(16)
                .messages(com.anthropic.core.JsonValue.from("hi")).build()));
        assertThat(string.statusCode()).isEqualTo(400);
        assertThat(string.errorType()).hasValue(ErrorType.INVALID_REQUEST_ERROR);
        assertThat(string.apiMessage()).hasValue("messages: value: \"hi\" (expected: a non-empty array of messages)");

        AnthropicServiceException empty = catchThrowableOfType(AnthropicServiceException.class, () -> anthropic.messages()
            .create(MessageCreateParams.builder().model("anthropic/claude").maxTokens(16).messages(List.<MessageParam>of())
                .build()));
        assertThat(empty.statusCode()).isEqualTo(400);
        assertThat(empty.apiMessage()).hasValue("messages: must not be empty (expected: at least one message)");

        // The SDK itself refuses a max_tokens that is not a number, so plain HTTP sends that one.
        HttpResponse<String> notInteger = post(MESSAGES, "application/json",
            "{\"model\":\"anthropic/claude\",\"max_tokens\":\"lots\",\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]}");
        assertDialectError("anthropic", 400, notInteger.statusCode(), notInteger.body(),
            "max_tokens: value: \"lots\" (expected: an integer)");
        HttpResponse<String> missing = post(MESSAGES, "application/json",
            "{\"model\":\"anthropic/claude\",\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]}");
        assertDialectError("anthropic", 400, missing.statusCode(), missing.body(),
            "max_tokens: must be set (expected: an integer)");
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
        "{\"contents\":\"hi\"}|contents: value: \"hi\" (expected: a non-empty array of contents)",
        "{\"contents\":[]}|contents: must not be empty (expected: at least one content)",
        "{\"generationConfig\":{\"temperature\":0.5}}|contents: must be set (expected: a non-empty array of contents)",
    })
    void geminiContentsNotANonEmptyArrayIs400WithoutUpstreamCall(String body, String message)
    {
        HttpResponse<String> r = post(GEMINI, "application/json", body);
        assertDialectError("gemini", 400, r.statusCode(), r.body(), message);
    }

    // --- 2. bodies that are not JSON --------------------------------------------------------------------------------

    @ParameterizedTest(name = "{0} {1}")
    @CsvSource(delimiter = '|', value = {
        "openai|text/plain",
        "openai|application/x-www-form-urlencoded",
        "anthropic|text/plain; charset=utf-8",
        "anthropic|multipart/form-data; boundary=x",
        "gemini|text/plain",
        "gemini|application/x-www-form-urlencoded",
    })
    void bodyThatIsNotJsonIs415InTheDialectWithoutUpstreamCall(String dialect, String contentType)
    {
        HttpResponse<String> r = post(pathOf(dialect), contentType, bodyOf(dialect));
        assertDialectError(dialect, 415, r.statusCode(), r.body(),
            "content-type: \"" + contentType + "\" is not supported (expected: application/json)");
        // The body was not read: the connection closes after the answer, and the answer says so.
        assertThat(r.headers().firstValue("connection")).hasValue("close");
        HttpResponse<String> latin1 = post(pathOf(dialect), "application/json; charset=iso-8859-1", bodyOf(dialect));
        assertDialectError(dialect, 415, latin1.statusCode(), latin1.body(),
            "content-type: charset \"iso-8859-1\" is not supported (expected: utf-8, or no charset)");
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource({"openai", "anthropic", "gemini"})
    void bodyWithoutContentTypeIsReadAsJson(String dialect) throws Exception
    {
        // The JDK client sends no Content-Type unless told to.
        HttpResponse<String> r = post(pathOf(dialect), null, bodyOf(dialect));
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        assertThat(r.headers().firstValue("content-type")).hasValueSatisfying(v -> assertThat(v).startsWith("application/json"));
        assertThat(mock.requests()).hasSize(1);
        mock.clearRecords();
    }

    // --- 3. protocol errors: Jetty answers them, through the server's error handler ---------------------------------

    @Test
    void twoDifferentContentLengthsAre400InTheDialectAndCloseTheConnection() throws Exception
    {
        byte[] body = ANTHROPIC_BODY.getBytes(StandardCharsets.UTF_8);
        Raw r = raw(head("POST " + MESSAGES + " HTTP/1.1", "x-api-key: " + ANTHROPIC_KEY, "Content-Type: application/json",
            "Content-Length: " + body.length, "Content-Length: " + (body.length + 10)), body);
        r.assertDialectError("anthropic", 400, "malformed HTTP request: Multiple Content-Lengths");
    }

    @Test
    void chunkedWithContentLengthIs400InTheDialectAndCloseTheConnection() throws Exception
    {
        // The request-smuggling shape: a front end reading Content-Length and one reading chunks would disagree.
        byte[] body = GEMINI_BODY.getBytes(StandardCharsets.UTF_8);
        String chunked = Integer.toHexString(body.length) + "\r\n" + GEMINI_BODY + "\r\n0\r\n\r\n";
        Raw r = raw(head("POST " + GEMINI + " HTTP/1.1", "x-goog-api-key: " + GEMINI_KEY, "Content-Type: application/json",
            "Content-Length: " + body.length, "Transfer-Encoding: chunked"), chunked.getBytes(StandardCharsets.UTF_8));
        r.assertDialectError("gemini", 400, "malformed HTTP request: Transfer-Encoding and Content-Length");
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource({"openai", "anthropic", "gemini"})
    void headersOf256KiBAre431InTheDialectAndCloseTheConnection(String dialect) throws Exception
    {
        byte[] body = bodyOf(dialect).getBytes(StandardCharsets.UTF_8);
        Raw r = raw(head("POST " + pathOf(dialect) + " HTTP/1.1", keyHeader(dialect), "Content-Type: application/json",
            "X-Padding: " + "p".repeat(256 * 1024), "Content-Length: " + body.length), body);
        r.assertDialectError(dialect, 431, "request headers are too large (expected: a request line and headers of at most 8192"
            + " bytes)");
    }

    @Test
    void requestLineOf9KiBIs414AndCloseTheConnection() throws Exception
    {
        // Jetty gives up before it has the path, so no dialect applies: OpenAI's shape, as for an unknown path.
        byte[] body = OPENAI_BODY.getBytes(StandardCharsets.UTF_8);
        Raw r = raw(head("POST " + CHAT + "?pad=" + "q".repeat(9 * 1024) + " HTTP/1.1", "Authorization: Bearer " + OPENAI_KEY,
            "Content-Type: application/json", "Content-Length: " + body.length), body);
        r.assertDialectError("openai", 414, "request URI is too long (expected: a request line and headers of at most 8192"
            + " bytes)");
    }

    @Test
    void http2VersionInAnHttp11RequestLineIs426InTheDialect() throws Exception
    {
        byte[] body = ANTHROPIC_BODY.getBytes(StandardCharsets.UTF_8);
        Raw r = raw(head("POST " + MESSAGES + " HTTP/2.0", "x-api-key: " + ANTHROPIC_KEY, "Content-Type: application/json",
            "Content-Length: " + body.length), body);
        r.assertDialectError("anthropic", 426, "HTTP/2.0 in an HTTP/1 request line is not supported (expected: HTTP/1.1, or"
            + " HTTP/2 starting with the connection preface)");
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource({"HTTP/3.0, Unsupported Version", "HTTP/1.7, Unknown Version"})
    void unsupportedHttpVersionIs505(String version, String reason) throws Exception
    {
        byte[] body = OPENAI_BODY.getBytes(StandardCharsets.UTF_8);
        Raw r = raw(head("POST " + CHAT + " " + version, "Authorization: Bearer " + OPENAI_KEY, "Content-Type: application/json",
            "Content-Length: " + body.length), body);
        r.assertDialectError("openai", 505, "HTTP version not supported: " + reason + " (expected: HTTP/1.1, HTTP/1.0, or HTTP/2"
            + " over h2c)");
    }

    @Test
    void requestWhileDrainingAtShutdownIs503InTheDialect() throws Exception
    {
        // A second gateway, since this one is stopped: a slow stream keeps it draining while a connection opened
        // before the shutdown sends a new request. (The stream writes every 100 ms: Jetty cuts connections idle for
        // a second once it shuts down.)
        MockProvider slow = MockProvider.builder().streamProfile(Duration.ZERO, Duration.ofMillis(100), 25).start();
        GatewayHarness draining = GatewayHarness.start(dir, config("http://127.0.0.1:" + slow.port()), TestDist.plugins(),
            Map.of("UPSTREAM_KEY", "upstream-key"));
        CompletableFuture<HttpResponse<String>> inFlight = jdk.sendAsync(HttpRequest.newBuilder(
                URI.create(draining.url(CHAT))).header("content-type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString(OPENAI_BODY.replace("{", "{\"stream\":true,"))).build(),
            HttpResponse.BodyHandlers.ofString());
        try (Socket socket = new Socket("127.0.0.1", draining.gateway.port()))
        {
            assertThat(slow.awaitRequests(1, Duration.ofSeconds(10))).isTrue();
            socket.setSoTimeout(10_000);
            OutputStream out = socket.getOutputStream();
            InputStream in = socket.getInputStream();
            // A connection in use just before the shutdown: Jetty gives idle connections one more second.
            out.write(("GET /healthz HTTP/1.1\r\nHost: sluice\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
            out.flush();
            assertThat(readResponse(in, false).status()).isEqualTo(200);
            CompletableFuture<Void> closing = CompletableFuture.runAsync(() ->
            {
                try
                {
                    draining.close();
                }
                catch (Exception e)
                {
                    throw new RuntimeException(e);
                }
            });
            Thread.sleep(200);

            byte[] body = ANTHROPIC_BODY.getBytes(StandardCharsets.UTF_8);
            out.write(head("POST " + MESSAGES + " HTTP/1.1", "x-api-key: " + ANTHROPIC_KEY, "Content-Type: application/json",
                "Content-Length: " + body.length));
            out.write(body);
            out.flush();
            Raw r = readResponse(in, true);
            r.assertDialectError("anthropic", 503,
                "the gateway is shutting down and takes no new requests (retry: another instance will answer)");
            assertThat(r.closed()).as("the connection closes after the 503").isTrue();
            HttpResponse<String> stream = inFlight.get(20, TimeUnit.SECONDS);
            assertThat(stream.statusCode()).as("the stream in flight finishes").isEqualTo(200);
            assertThat(stream.body()).endsWith("data: [DONE]\n\n");
            closing.get(20, TimeUnit.SECONDS);
            assertThat(slow.requests()).as("requests the provider saw").hasSize(1);
        }
        finally
        {
            slow.close();
        }
    }

    // --- helpers ---------------------------------------------------------------------------------------------------

    private static String pathOf(String dialect)
    {
        return switch (dialect)
        {
            case "openai" -> CHAT;
            case "anthropic" -> MESSAGES;
            default -> GEMINI;
        };
    }

    private static String bodyOf(String dialect)
    {
        return switch (dialect)
        {
            case "openai" -> OPENAI_BODY;
            case "anthropic" -> ANTHROPIC_BODY;
            default -> GEMINI_BODY;
        };
    }

    private static String keyHeader(String dialect)
    {
        return switch (dialect)
        {
            case "openai" -> "Authorization: Bearer " + OPENAI_KEY;
            case "anthropic" -> "x-api-key: " + ANTHROPIC_KEY;
            default -> "x-goog-api-key: " + GEMINI_KEY;
        };
    }

    /** POSTs with the client's key of the path's dialect; {@code contentType} {@code null} sends none. */
    private static HttpResponse<String> post(String path, String contentType, String body)
    {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(gateway.url(path))).timeout(Duration.ofSeconds(20))
            .POST(HttpRequest.BodyPublishers.ofString(body));
        String[] key = keyHeader(path.equals(CHAT) ? "openai" : path.equals(MESSAGES) ? "anthropic" : "gemini").split(": ", 2);
        request.header(key[0], key[1]);
        if (contentType != null)
            request.header("Content-Type", contentType);
        try
        {
            return jdk.send(request.build(), HttpResponse.BodyHandlers.ofString());
        }
        catch (IOException | InterruptedException e)
        {
            throw new AssertionError(e);
        }
    }

    private static byte[] head(String requestLine, String... headers)
    {
        StringBuilder b = new StringBuilder(requestLine).append("\r\nHost: sluice\r\n");
        for (String h : headers)
            b.append(h).append("\r\n");
        return b.append("\r\n").toString().getBytes(StandardCharsets.US_ASCII);
    }

    /**
     * Sends {@code head} and {@code body} on a new connection and reads the answer to the end of the connection. The
     * write runs on its own thread: the server answers and closes before it has read a 256 KiB header, and a write
     * that then fails must not hide the answer.
     */
    private static Raw raw(byte[] head, byte[] body) throws Exception
    {
        try (Socket socket = new Socket("127.0.0.1", gateway.gateway.port()))
        {
            socket.setSoTimeout(10_000);
            Thread writer = new Thread(() ->
            {
                try
                {
                    OutputStream out = socket.getOutputStream();
                    out.write(head);
                    out.write(body);
                    out.flush();
                }
                catch (IOException expected)
                {
                    // The server closed first; its answer is what the test reads.
                }
            }, "raw-writer");
            writer.start();
            Raw r = readResponse(socket.getInputStream(), true);
            writer.join(10_000);
            assertThat(r.closed()).as("the server closed the connection after answering").isTrue();
            return r;
        }
    }

    /**
     * Reads one response (headers and a Content-Length body); then, if {@code awaitClose}, whether the server closes
     * the connection within the socket's timeout.
     */
    private static Raw readResponse(InputStream in, boolean awaitClose) throws IOException
    {
        RawResponse r = RawResponse.read(in);
        return new Raw(r.status(), r.headers(), r.body(), awaitClose && RawResponse.closes(in));
    }

    private record Raw(int status, Map<String, String> headers, String body, boolean closed)
    {
        void assertDialectError(String dialect, int expectedStatus, String message)
        {
            assertThat(headers.get("content-type")).as("content type of %s", body).startsWith("application/json");
            BadInputTest.assertDialectError(dialect, expectedStatus, status, body, message);
        }
    }

    /** The body is {@code dialect}'s error envelope with {@code message}, and echoes nothing the client sent. */
    private static void assertDialectError(String dialect, int expectedStatus, int status, String body, String message)
    {
        assertThat(status).as(body).isEqualTo(expectedStatus);
        JsonNode json;
        try
        {
            json = Json.MAPPER.readTree(body);
        }
        catch (IOException e)
        {
            throw new AssertionError("not JSON: " + body, e);
        }
        switch (dialect)
        {
            case "openai" ->
            {
                assertThat(json.has("type")).as(body).isFalse();
                assertThat(json.path("error").path("type").asText()).as(body)
                    .isEqualTo(expectedStatus >= 500 ? "server_error" : "invalid_request_error");
                assertThat(json.path("error").path("message").asText()).isEqualTo(message);
            }
            case "anthropic" ->
            {
                assertThat(json.path("type").asText()).as(body).isEqualTo("error");
                assertThat(json.path("error").path("type").asText()).as(body).isNotBlank();
                assertThat(json.path("error").path("message").asText()).isEqualTo(message);
            }
            default ->
            {
                assertThat(json.path("error").path("code").asInt()).as(body).isEqualTo(expectedStatus);
                assertThat(json.path("error").path("status").asText()).as(body).isNotBlank();
                assertThat(json.path("error").path("message").asText()).isEqualTo(message);
            }
        }
        assertNoEcho(body);
    }

    private static void assertNoEcho(String body)
    {
        assertThat(body).doesNotContain("secret").doesNotContain("Exception").doesNotContain("at org.").doesNotContain("<html")
            .doesNotContain("ppppp").doesNotContain("qqqqq");
    }
}
