package dev.sluice.runtime;

import com.anthropic.client.AnthropicClient;
import com.anthropic.models.ErrorType;
import com.anthropic.models.messages.Message;
import com.anthropic.models.messages.MessageCreateParams;
import com.fasterxml.jackson.databind.JsonNode;
import com.google.genai.Client;
import com.google.genai.errors.ClientException;
import com.google.genai.types.GenerateContentResponse;
import com.openai.client.OpenAIClient;
import com.openai.errors.PermissionDeniedException;
import com.openai.errors.UnauthorizedException;
import com.openai.models.chat.completions.ChatCompletion;
import com.openai.models.chat.completions.ChatCompletionCreateParams;
import dev.sluice.api.config.ConfigException;
import dev.sluice.support.json.Json;
import dev.sluice.mock.MockDialect;
import dev.sluice.mock.MockModels;
import dev.sluice.mock.MockProvider;
import dev.sluice.mock.RecordedRequest;
import org.eclipse.jetty.logging.JettyLevel;
import org.eclipse.jetty.logging.JettyLogger;
import org.eclipse.jetty.logging.StdErrAppender;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.slf4j.LoggerFactory;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The {@code keys} plugin (virtual keys) end to end: the real gateway with the distribution's plugin jars, the
 * official openai-java, anthropic-java and google-genai SDKs (and raw HTTP where a case needs the exact bytes or a
 * header the SDKs do not send), and the bench's {@link MockProvider} as the provider of all three dialects.
 *
 * <p>Every refusal is asserted in the client's dialect — status, body, headers — together with the provider having
 * seen nothing. The runtime's log (jetty-slf4j-impl's {@link StdErrAppender}, {@code dev.sluice} at DEBUG for this
 * class) is captured for the whole class and scanned at the end for every key and every hash used.
 */
class KeysPluginTest
{
    private static final String TEAM_KEY = "sk-sluice-team-a-0123456789abcdefghijklmnopqrstuvwxyzABCD";
    private static final String NARROW_KEY = "sk-sluice-narrow-0123456789abcdefghijklmnopqrstuvwxyzABCD";
    private static final String EXPIRED_KEY = "sk-sluice-expired-0123456789abcdefghijklmnopqrstuvwxyzABCD";
    private static final String FILE_KEY_1 = "sk-sluice-file-one-0123456789abcdefghijklmnopqrstuvwxyzABCD";
    private static final String FILE_KEY_2 = "sk-sluice-file-two-0123456789abcdefghijklmnopqrstuvwxyzABCD";
    private static final String UNKNOWN_KEY = "sk-sluice-unknown-0123456789abcdefghijklmnopqrstuvwxyzABCD";
    private static final Map<String, String> UPSTREAM_KEYS = Map.of(
        "OPENAI_KEY", "sk-upstream-openai-secret",
        "ANTHROPIC_KEY", "sk-ant-upstream-secret",
        "GEMINI_KEY", "upstream-gemini-secret");
    private static final List<String> DIALECTS = List.of("openai", "anthropic", "gemini");
    private static final String MODELS = "[ \"openai/*\", \"anthropic/*\", \"gemini/*\" ]";

    /** Every key and hash this class uses: none may appear in a log line. */
    private static final Set<String> SECRETS = ConcurrentHashMap.newKeySet();

    @TempDir
    static Path dir;

    private static MockProvider mock;
    private static GatewayHarness gateway;
    private static Path keysFile;
    private static HttpClient http;
    private static final ByteArrayOutputStream LOG = new ByteArrayOutputStream();
    private static PrintStream originalStream;
    private static JettyLevel originalLevel;

    @BeforeAll
    static void start() throws Exception
    {
        captureLog();
        for (String key : List.of(TEAM_KEY, NARROW_KEY, EXPIRED_KEY, FILE_KEY_1, FILE_KEY_2, UNKNOWN_KEY))
        {
            SECRETS.add(key);
            SECRETS.add(sha256(key));
        }
        SECRETS.addAll(UPSTREAM_KEYS.values());
        mock = MockProvider.builder().streamProfile(Duration.ZERO, Duration.ZERO, 4).start();
        keysFile = dir.resolve("keys.yaml");
        writeKeysFile(fileKey("file-one", FILE_KEY_1, null));
        // The file is watched hourly here: these tests reload it with POST /keys/reload, one test watches it for real.
        gateway = GatewayHarness.start(dir, config(keysFile, "1h"), TestDist.plugins(), UPSTREAM_KEYS);
        debugLogging();
        http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
    }

    @AfterAll
    static void stop() throws Exception
    {
        try
        {
            if (gateway != null)
                gateway.close();
        }
        finally
        {
            if (mock != null)
                mock.close();
            restoreLog();
        }
        noKeyMaterialInAnyLogLine();
    }

    @BeforeEach
    void reset() throws Exception
    {
        debugLogging();
        writeKeysFile(fileKey("file-one", FILE_KEY_1, null));
        assertThat(post(gateway.adminUrl("/keys/reload")).statusCode()).isEqualTo(200);
        mock.clearRecords();
    }

    // -----------------------------------------------------------------------------------------------------------------
    // Refusals
    // -----------------------------------------------------------------------------------------------------------------

    @ParameterizedTest(name = "{0} client")
    @ValueSource(strings = {"openai", "anthropic", "gemini"})
    void rejectsAMissingKeyWith401SayingWhichHeaderToSend(String dialect) throws Exception
    {
        HttpResponse<String> r = chat(dialect, null, "openai/" + MockModels.DEFAULT);

        String how = switch (dialect)
        {
            case "openai" -> "send it as Authorization: Bearer <key>";
            case "anthropic" -> "send it as x-api-key: <key> (or Authorization: Bearer <key>)";
            default -> "send it as x-goog-api-key: <key> (or the key query parameter)";
        };
        assertDialectError(dialect, r, 401, "missing API key: " + how);
        assertThat(mock.requestCount()).isZero();
    }

    @Test
    void rejectsAnUnknownKeyWith401InEveryDialectWithTheOfficialSdks()
    {
        assertThatThrownBy(() -> openai(UNKNOWN_KEY).chat().completions().create(ask("openai/" + MockModels.DEFAULT)))
            .isInstanceOfSatisfying(UnauthorizedException.class, e ->
            {
                assertThat(e.statusCode()).isEqualTo(401);
                assertThat(e.type()).hasValue("authentication_error");
                assertThat(e.code()).hasValue("invalid_api_key");
                assertThat(e.getMessage()).contains("invalid API key").doesNotContain(UNKNOWN_KEY);
            });
        assertThatThrownBy(() -> anthropic(UNKNOWN_KEY).messages().create(askAnthropic("anthropic/" + MockModels.DEFAULT)))
            .isInstanceOfSatisfying(com.anthropic.errors.UnauthorizedException.class, e ->
            {
                assertThat(e.statusCode()).isEqualTo(401);
                assertThat(e.errorType()).hasValue(ErrorType.AUTHENTICATION_ERROR);
                assertThat(e.getMessage()).contains("invalid API key").doesNotContain(UNKNOWN_KEY);
            });
        try (Client genai = genai(UNKNOWN_KEY))
        {
            assertThatThrownBy(() -> genai.models.generateContent("gemini/" + MockModels.DEFAULT, "Hi", null))
                .isInstanceOfSatisfying(ClientException.class, e ->
                {
                    assertThat(e.code()).isEqualTo(401);
                    assertThat(e.status()).isEqualTo("UNAUTHENTICATED");
                    assertThat(e.message()).startsWith("invalid API key").doesNotContain(UNKNOWN_KEY);
                });
        }
        assertThat(mock.requestCount()).isZero();
    }

    @ParameterizedTest(name = "{0} client")
    @ValueSource(strings = {"openai", "anthropic", "gemini"})
    void rejectsAnUnknownKeyWith401InTheDialectsShape(String dialect) throws Exception
    {
        HttpResponse<String> r = chat(dialect, UNKNOWN_KEY, "openai/" + MockModels.DEFAULT);

        assertDialectError(dialect, r, 401, "invalid API key (expected: a key issued for this gateway)");
        assertThat(r.headers().firstValue("www-authenticate")).hasValue("Bearer realm=\"sluice\"");
        assertThat(r.body()).doesNotContain(UNKNOWN_KEY);
        assertThat(mock.requestCount()).isZero();
    }

    @ParameterizedTest(name = "{0} client")
    @ValueSource(strings = {"openai", "anthropic", "gemini"})
    void rejectsAnExpiredKeyWith401(String dialect) throws Exception
    {
        HttpResponse<String> r = chat(dialect, EXPIRED_KEY, "openai/" + MockModels.DEFAULT);

        assertDialectError(dialect, r, 401,
            "API key expired at 2020-01-01T00:00:00Z (expected: a key that is still valid; ask for a new one)");
        assertThat(mock.requestCount()).isZero();
    }

    @Test
    void rejectsAModelTheKeyMayNotUseWith403NamingTheModelAndTheKeyId()
    {
        String expected = "model: \"anthropic/mock-model\" is not allowed for API key narrow (expected: one of openai/mock-model,"
            + " gemini/mock-?odel)";
        assertThatThrownBy(() -> openai(NARROW_KEY).chat().completions().create(ask("anthropic/" + MockModels.DEFAULT)))
            .isInstanceOfSatisfying(PermissionDeniedException.class, e ->
            {
                assertThat(e.statusCode()).isEqualTo(403);
                assertThat(e.type()).hasValue("permission_error");
                assertThat(e.code()).hasValue("model_not_allowed");
                assertThat(e.param()).hasValue("model");
                assertThat(e.getMessage()).contains(expected);
            });
        assertThatThrownBy(() -> anthropic(NARROW_KEY).messages().create(askAnthropic("anthropic/" + MockModels.DEFAULT)))
            .isInstanceOfSatisfying(com.anthropic.errors.PermissionDeniedException.class, e ->
            {
                assertThat(e.statusCode()).isEqualTo(403);
                assertThat(e.errorType()).hasValue(ErrorType.PERMISSION_ERROR);
                assertThat(e.getMessage()).contains("is not allowed for API key narrow");
            });
        try (Client genai = genai(NARROW_KEY))
        {
            assertThatThrownBy(() -> genai.models.generateContent("anthropic/" + MockModels.DEFAULT, "Hi", null))
                .isInstanceOfSatisfying(ClientException.class, e ->
                {
                    assertThat(e.code()).isEqualTo(403);
                    assertThat(e.status()).isEqualTo("PERMISSION_DENIED");
                    assertThat(e.message()).startsWith(expected);
                });
            // The glob with '?' lets the key reach the Gemini model it names.
            GenerateContentResponse ok = genai.models.generateContent("gemini/" + MockModels.DEFAULT, "Hi", null);
            assertThat(ok.text()).isEqualTo(MockProvider.DEFAULT_TEXT);
        }
        assertThat(mock.requests()).singleElement().extracting(RecordedRequest::dialect).isEqualTo(MockDialect.GEMINI);
    }

    // -----------------------------------------------------------------------------------------------------------------
    // Admission, and what reaches the provider
    // -----------------------------------------------------------------------------------------------------------------

    @ParameterizedTest(name = "openai client -> {0} provider")
    @ValueSource(strings = {"openai", "anthropic", "gemini"})
    void aValidKeyPassesFromEverySdkAndTheProviderSeesOnlyItsOwnKey(String provider)
    {
        String model = provider + "/" + MockModels.DEFAULT;
        ChatCompletion completion = openai(TEAM_KEY).chat().completions().create(ask(model));
        assertThat(completion.choices().get(0).message().content()).hasValue(MockProvider.DEFAULT_TEXT);
        Message message = anthropic(TEAM_KEY).messages().create(askAnthropic(model));
        assertThat(message.content().get(0).text().orElseThrow().text()).isEqualTo(MockProvider.DEFAULT_TEXT);
        try (Client genai = genai(TEAM_KEY))
        {
            assertThat(genai.models.generateContent(model, "Hi", null).text()).isEqualTo(MockProvider.DEFAULT_TEXT);
        }

        assertThat(mock.requests()).hasSize(3);
        for (RecordedRequest sent : mock.requests())
            assertOnlyTheProviderKey(provider, sent, TEAM_KEY);
    }

    @Test
    void aKeyInTheGeminiQueryIsAcceptedAndNeverReachesTheProvider() throws Exception
    {
        for (String provider : DIALECTS)
        {
            String model = provider + "/" + MockModels.DEFAULT;
            HttpResponse<String> r = send(HttpRequest.newBuilder(URI.create(gateway.url("/v1beta/models/"
                    + model + ":generateContent?key=" + TEAM_KEY)))
                .header("content-type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString("{\"contents\":[{\"role\":\"user\",\"parts\":[{\"text\":\"Hi\"}]}]}"))
                .build());
            assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
            assertOnlyTheProviderKey(provider, mock.lastRequest(), TEAM_KEY);
        }
        HttpResponse<String> wrong = send(HttpRequest.newBuilder(URI.create(gateway.url("/v1beta/models/openai/mock-model"
                + ":generateContent?key=" + UNKNOWN_KEY)))
            .header("content-type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString("{\"contents\":[{\"role\":\"user\",\"parts\":[{\"text\":\"Hi\"}]}]}"))
            .build());
        assertDialectError("gemini", wrong, 401, "invalid API key (expected: a key issued for this gateway)");
        assertThat(mock.requests()).hasSize(3);
    }

    @Test
    void aProviderThatRefusesTheGatewaysKeyNeverShowsThatKeyToTheClient() throws Exception
    {
        // A provider that wants another key than the gateway's: each answers its 401 (Gemini: 400), and the client gets
        // a 502 that says the gateway's credentials were refused, with nothing of the provider's message.
        try (MockProvider strict = MockProvider.builder().apiKey("the-key-the-provider-wants").start();
             GatewayHarness g = GatewayHarness.start(dir, config(null, "1h").replace("http://127.0.0.1:" + mock.port(),
                 "http://127.0.0.1:" + strict.port()), TestDist.plugins(), UPSTREAM_KEYS))
        {
            for (String provider : DIALECTS)
            {
                HttpResponse<String> r = send(HttpRequest.newBuilder(URI.create(g.url("/v1/chat/completions")))
                    .header("content-type", "application/json").header("authorization", "Bearer " + TEAM_KEY)
                    .POST(HttpRequest.BodyPublishers.ofString("{\"model\":\"" + provider + "/mock-model\",\"messages\":"
                        + "[{\"role\":\"user\",\"content\":\"Hi\"}]}"))
                    .build());
                assertThat(r.statusCode()).as(provider + ": " + r.body()).isIn(400, 502);
                for (String secret : UPSTREAM_KEYS.values())
                    assertThat(r.body()).doesNotContain(secret);
                r.headers().map().forEach((name, values) ->
                {
                    for (String secret : UPSTREAM_KEYS.values())
                        assertThat(values.toString()).as(name).doesNotContain(secret);
                });
            }
            assertThat(strict.requestCount()).isEqualTo(3);
        }
    }

    /**
     * Each dialect reads the key where its SDKs send it, and only there: a key in another dialect's place is a missing
     * key (which says where to put it), never a silent pass. The scheme and header names are case-insensitive.
     */
    @Test
    void eachDialectTakesTheKeyFromEveryPlaceItsClientsSendItAndNowhereElse() throws Exception
    {
        String openai = "/v1/chat/completions";
        String anthropic = "/v1/messages";
        String gemini = "/v1beta/models/openai/mock-model:generateContent";
        record Form(String dialect, String path, String header, String value, boolean admitted) { }
        List<Form> forms = List.of(
            new Form("openai", openai, "Authorization", "Bearer " + TEAM_KEY, true),
            new Form("openai", openai, "authorization", "bearer " + TEAM_KEY, true),
            new Form("openai", openai, "x-api-key", TEAM_KEY, false),
            new Form("openai", openai, "x-goog-api-key", TEAM_KEY, false),
            new Form("openai", openai + "?key=" + TEAM_KEY, null, null, false),
            new Form("openai", openai, "Authorization", "Basic " + TEAM_KEY, false),
            new Form("anthropic", anthropic, "x-api-key", TEAM_KEY, true),
            new Form("anthropic", anthropic, "X-Api-Key", TEAM_KEY, true),
            new Form("anthropic", anthropic, "Authorization", "Bearer " + TEAM_KEY, true),
            new Form("anthropic", anthropic, "x-goog-api-key", TEAM_KEY, false),
            new Form("anthropic", anthropic + "?key=" + TEAM_KEY, null, null, false),
            new Form("gemini", gemini, "x-goog-api-key", TEAM_KEY, true),
            new Form("gemini", gemini + "?key=" + TEAM_KEY, null, null, true),
            new Form("gemini", gemini + "?alt=json&key=" + TEAM_KEY, null, null, true),
            new Form("gemini", gemini, "Authorization", "Bearer " + TEAM_KEY, false),
            new Form("gemini", gemini, "x-api-key", TEAM_KEY, false));
        for (Form form : forms)
        {
            HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(gateway.url(form.path())))
                .header("content-type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(chatBody(form.dialect(), "openai/" + MockModels.DEFAULT)));
            if (form.dialect().equals("anthropic"))
                b.header("anthropic-version", "2023-06-01");
            if (form.header() != null)
                b.header(form.header(), form.value());
            HttpResponse<String> r = send(b.build());
            String what = form.dialect() + " client, key in " + (form.header() == null ? form.path() : form.header());
            if (form.admitted())
            {
                assertThat(r.statusCode()).as(what + ": " + r.body()).isEqualTo(200);
                assertOnlyTheProviderKey("openai", mock.lastRequest(), TEAM_KEY);
            }
            else
            {
                assertThat(r.statusCode()).as(what + ": " + r.body()).isEqualTo(401);
                assertThat(json(r).path("error").path("message").asText()).as(what).startsWith("missing API key: send it as");
            }
        }
        assertThat(mock.requestCount()).isEqualTo(forms.stream().filter(Form::admitted).count());
    }

    @Test
    void whereADialectHasTwoPlacesForTheKeyItsOwnHeaderWins() throws Exception
    {
        // Anthropic: x-api-key before Authorization; Gemini: x-goog-api-key before ?key=. The first place decides alone.
        HttpResponse<String> anthropic = send(HttpRequest.newBuilder(URI.create(gateway.url("/v1/messages")))
            .header("content-type", "application/json").header("anthropic-version", "2023-06-01")
            .header("x-api-key", UNKNOWN_KEY).header("authorization", "Bearer " + TEAM_KEY)
            .POST(HttpRequest.BodyPublishers.ofString(chatBody("anthropic", "openai/" + MockModels.DEFAULT))).build());
        assertDialectError("anthropic", anthropic, 401, "invalid API key (expected: a key issued for this gateway)");
        HttpResponse<String> gemini = send(HttpRequest.newBuilder(URI.create(gateway.url(
                "/v1beta/models/openai/mock-model:generateContent?key=" + UNKNOWN_KEY)))
            .header("content-type", "application/json").header("x-goog-api-key", TEAM_KEY)
            .POST(HttpRequest.BodyPublishers.ofString(chatBody("gemini", "openai/" + MockModels.DEFAULT))).build());
        assertThat(gemini.statusCode()).as(gemini.body()).isEqualTo(200);
        assertThat(mock.requestCount()).isEqualTo(1);
    }

    @ParameterizedTest(name = "{0} provider")
    @ValueSource(strings = {"openai", "anthropic", "gemini"})
    void aProviderErrorQuotingTheProvidersKeyReachesNoClientWithIt(String provider) throws Exception
    {
        // The provider answers 400 with its own key in the message (MockModels.ECHO_KEY), which the client binding
        // relays as "upstream: …": the key must be gone from what every client dialect gets, and from the log.
        String secret = UPSTREAM_KEYS.get(provider.toUpperCase(java.util.Locale.ROOT) + "_KEY");
        for (String client : DIALECTS)
        {
            HttpResponse<String> r = chat(client, TEAM_KEY, provider + "/" + MockModels.ECHO_KEY);
            assertThat(r.statusCode()).as(r.body()).isEqualTo(400);
            assertThat(r.body()).as(client + " client").contains("Incorrect API key provided: [redacted]")
                .doesNotContain(secret);
        }
        assertThat(mock.requestCount()).isEqualTo(3);
    }

    // -----------------------------------------------------------------------------------------------------------------
    // The keys file and the admin endpoints
    // -----------------------------------------------------------------------------------------------------------------

    /** The admin listener caps bodies at 1 MiB: the same 413 whether the client declared the length or chunked it. */
    @Test
    void anAdminBodyOverTheCapGets413DeclaredOrChunkedAndTheEndpointStillServes() throws Exception
    {
        byte[] big = new byte[(1 << 20) + 4096];
        URI reload = URI.create(gateway.adminUrl("/keys/reload"));

        // As curl does for large bodies: the 413 comes before the body is sent. (The JDK 17 client waits forever for a
        // 100 Continue that does not come, so this one is a raw socket.)
        RawResponse declared;
        try (java.net.Socket socket = new java.net.Socket(reload.getHost(), reload.getPort()))
        {
            socket.setSoTimeout(20_000);
            socket.getOutputStream().write(("POST /keys/reload HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                + "Content-Length: " + big.length + "\r\nExpect: 100-continue\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
            declared = RawResponse.read(socket.getInputStream());
        }
        // A length the client never declares: the body is read up to the cap.
        HttpResponse<String> chunked = send(HttpRequest.newBuilder(reload).timeout(Duration.ofSeconds(20))
            .POST(HttpRequest.BodyPublishers.ofInputStream(() -> new java.io.ByteArrayInputStream(big))).build());

        assertThat(declared.status()).as(declared.body()).isEqualTo(413);
        assertThat(Json.MAPPER.readTree(declared.body()).path("error").path("message").asText())
            .isEqualTo("admin request bodies are limited to 1048576 bytes");
        assertThat(chunked.statusCode()).as(chunked.body()).isEqualTo(413);
        assertThat(json(chunked).path("error").path("message").asText())
            .isEqualTo("admin request bodies are limited to 1048576 bytes");
        assertThat(chunked.request().headers().firstValue("content-length")).as("really chunked").isEmpty();
        // The rest of each body is left unread, so each connection closes after its 413 and says so: a client that
        // sent its next request on it would read no answer.
        assertThat(declared.headers()).containsEntry("connection", "close");
        assertThat(chunked.headers().firstValue("connection")).hasValue("close");
        assertThat(post(reload.toString()).statusCode()).isEqualTo(200);
    }

    @Test
    void theKeysFileAddsRevokesAndExpiresKeysWithoutARestart() throws Exception
    {
        assertThat(chat("openai", FILE_KEY_1, "openai/mock-model").statusCode()).isEqualTo(200);
        assertThat(chat("openai", FILE_KEY_2, "openai/mock-model").statusCode()).isEqualTo(401);

        // Add.
        writeKeysFile(fileKey("file-one", FILE_KEY_1, null) + fileKey("file-two", FILE_KEY_2, null));
        JsonNode added = json(post(gateway.adminUrl("/keys/reload")));
        assertThat(added.path("reloaded").asBoolean()).isTrue();
        assertThat(added.path("added").toString()).isEqualTo("[\"file-two\"]");
        assertThat(added.path("keys").asInt()).isEqualTo(5);
        assertThat(chat("anthropic", FILE_KEY_2, "openai/mock-model").statusCode()).isEqualTo(200);

        // Revoke.
        writeKeysFile(fileKey("file-two", FILE_KEY_2, null));
        JsonNode revoked = json(post(gateway.adminUrl("/keys/reload")));
        assertThat(revoked.path("removed").toString()).isEqualTo("[\"file-one\"]");
        assertDialectError("openai", chat("openai", FILE_KEY_1, "openai/mock-model"), 401,
            "invalid API key (expected: a key issued for this gateway)");

        // Expire.
        writeKeysFile(fileKey("file-two", FILE_KEY_2, "2021-06-01T12:00:00Z"));
        JsonNode expired = json(post(gateway.adminUrl("/keys/reload")));
        assertThat(expired.path("modified").toString()).isEqualTo("[\"file-two\"]");
        assertDialectError("gemini", chat("gemini", FILE_KEY_2, "openai/mock-model"), 401,
            "API key expired at 2021-06-01T12:00:00Z (expected: a key that is still valid; ask for a new one)");

        // The config's keys were never touched.
        assertThat(chat("openai", TEAM_KEY, "openai/mock-model").statusCode()).isEqualTo(200);
        assertThat(mock.requestCount()).isEqualTo(3);
    }

    /**
     * Revoking a key refuses its next request at once, and lets the requests it already started finish: each was
     * admitted with the keys in force when it arrived, and a revocation cuts no answer in the middle.
     */
    @Test
    void aKeyRevokedWhileItsRequestsAreInFlightRefusesTheNextAndLetsThoseFinish() throws Exception
    {
        String slow = "openai/" + MockModels.slow(1_500);
        java.util.concurrent.CompletableFuture<HttpResponse<String>> plain = http.sendAsync(chatRequest("openai", FILE_KEY_1,
            slow, false), HttpResponse.BodyHandlers.ofString());
        java.util.concurrent.CompletableFuture<HttpResponse<String>> streamed = http.sendAsync(chatRequest("anthropic",
            FILE_KEY_1, slow, true), HttpResponse.BodyHandlers.ofString());
        assertThat(mock.awaitRequests(2, Duration.ofSeconds(10))).as("both requests reached the provider").isTrue();

        writeKeysFile(fileKey("file-two", FILE_KEY_2, null));
        JsonNode revoked = json(post(gateway.adminUrl("/keys/reload")));
        assertThat(revoked.path("removed").toString()).isEqualTo("[\"file-one\"]");
        assertThat(plain.isDone() || streamed.isDone()).as("an answer came before the revocation: nothing was tested")
            .isFalse();
        assertDialectError("openai", chat("openai", FILE_KEY_1, "openai/mock-model"), 401,
            "invalid API key (expected: a key issued for this gateway)");

        HttpResponse<String> plainAnswer = plain.get(30, java.util.concurrent.TimeUnit.SECONDS);
        assertThat(plainAnswer.statusCode()).as(plainAnswer.body()).isEqualTo(200);
        assertThat(json(plainAnswer).path("choices").path(0).path("message").path("content").asText())
            .isEqualTo(MockProvider.DEFAULT_TEXT);
        HttpResponse<String> streamAnswer = streamed.get(30, java.util.concurrent.TimeUnit.SECONDS);
        assertThat(streamAnswer.statusCode()).as(streamAnswer.body()).isEqualTo(200);
        assertThat(streamAnswer.body()).contains("event: message_stop").doesNotContain("event: error");
        assertThat(mock.requestCount()).isEqualTo(2);
        assertThat(mock.abortedCount()).isZero();
    }

    @Test
    void aBadKeysFileKeepsTheKeysInForceAndSaysWhy() throws Exception
    {
        String line = "bad-file-" + System.nanoTime();
        // Valid YAML, but a field is misspelt after a real hash: the message must name the place, never the hash.
        writeKeysFile(fileKey("file-two", FILE_KEY_2, null) + "  - { id: " + line + ", sha256: \"" + sha256(FILE_KEY_1)
            + "\", modles: [ \"x\" ] }\n");
        HttpResponse<String> r = post(gateway.adminUrl("/keys/reload"));
        assertThat(r.statusCode()).as(r.body()).isEqualTo(422);
        JsonNode refused = json(r);
        assertThat(refused.path("reloaded").asBoolean()).isFalse();
        assertThat(refused.path("keys").asInt()).isEqualTo(4);
        assertThat(refused.path("error").asText()).isEqualTo(keysFile + ": keys[1].modles: unknown key (expected one of:"
            + " expires, id, key, limits, metadata, models, sha256, team)");
        assertThat(r.body()).doesNotContain(sha256(FILE_KEY_1));
        // The old set is in force: file-one still works, file-two (only in the refused file) does not.
        assertThat(chat("openai", FILE_KEY_1, "openai/mock-model").statusCode()).isEqualTo(200);
        assertThat(chat("openai", FILE_KEY_2, "openai/mock-model").statusCode()).isEqualTo(401);

        // Not YAML at all; then a duplicate; then a plaintext key.
        writeKeysFile("keys: [ { id: a, sha256: \"" + sha256(FILE_KEY_2) + "\" ");
        assertThat(json(post(gateway.adminUrl("/keys/reload"))).path("error").asText())
            .startsWith(keysFile + ": not valid YAML at line ").doesNotContain(sha256(FILE_KEY_2));
        writeKeysFile(fileKey("team-a", FILE_KEY_2, null));
        assertThat(json(post(gateway.adminUrl("/keys/reload"))).path("error").asText())
            .isEqualTo(keysFile + ": keys[0].id: duplicate id \"team-a\" (also bindings.keys.options.keys[0];"
                + " expected: unique ids)");
        writeKeysFile(fileKey("dup-of-team", TEAM_KEY, null));
        assertThat(json(post(gateway.adminUrl("/keys/reload"))).path("error").asText())
            .isEqualTo(keysFile + ": keys[0].sha256: the same key as bindings.keys.options.keys[0] (id team-a;"
                + " expected: one definition per key)");
        writeKeysFile("keys:\n  - { id: plain, key: \"" + FILE_KEY_2 + "\" }\n");
        assertThat(json(post(gateway.adminUrl("/keys/reload"))).path("error").asText())
            .startsWith(keysFile + ": keys[0].key: plaintext keys are not accepted").contains("sluice keys new")
            .doesNotContain(FILE_KEY_2);
        Files.delete(keysFile);
        assertThat(json(post(gateway.adminUrl("/keys/reload"))).path("error").asText())
            .isEqualTo(keysFile + ": no such file");
        assertThat(chat("openai", FILE_KEY_1, "openai/mock-model").statusCode()).isEqualTo(200);

        // GET /keys reports the refusal, and the log said why, naming the file.
        JsonNode listed = json(get(gateway.adminUrl("/keys")));
        assertThat(listed.path("file").path("error").asText()).isEqualTo(keysFile + ": no such file");
        assertThat(logText()).contains("bindings.keys: keys file refused, keeping the 4 keys in force: " + keysFile
            + ": keys[1].modles: unknown key");
    }

    @Test
    void theWatchPicksUpAChangedFileWithoutAnyRequest() throws Exception
    {
        Path watched = dir.resolve("watched.yaml");
        Files.writeString(watched, "keys:\n" + fileKey("file-one", FILE_KEY_1, null));
        try (GatewayHarness g = GatewayHarness.start(dir, config(watched, "200ms"), TestDist.plugins(), UPSTREAM_KEYS))
        {
            assertThat(chat(g, "openai", FILE_KEY_2, "openai/mock-model").statusCode()).isEqualTo(401);
            Path next = dir.resolve("watched.yaml.new");
            Files.writeString(next, "keys:\n" + fileKey("file-one", FILE_KEY_1, null) + fileKey("file-two", FILE_KEY_2, null));
            Files.move(next, watched, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);

            // Bounded wait for behaviour, not a timing assertion: the key must work within 20 s (checks every 200ms).
            int status = 0;
            for (long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos(); System.nanoTime() < deadline; )
            {
                status = chat(g, "openai", FILE_KEY_2, "openai/mock-model").statusCode();
                if (status == 200)
                    break;
                Thread.sleep(100);
            }
            assertThat(status).as("the added key works without a reload request").isEqualTo(200);
        }
    }

    @Test
    void getKeysListsIdsTeamsModelsExpiryAndSourceButNeverHashes() throws Exception
    {
        HttpResponse<String> r = get(gateway.adminUrl("/keys"));
        assertThat(r.statusCode()).isEqualTo(200);
        JsonNode listed = json(r);
        assertThat(listed.path("binding").asText()).isEqualTo("keys");
        assertThat(listed.path("file").path("path").asText()).isEqualTo(keysFile.toString());
        List<String> ids = new ArrayList<>();
        listed.path("keys").forEach(k -> ids.add(k.path("id").asText() + "@" + k.path("source").asText()));
        assertThat(ids).containsExactly("team-a@config", "narrow@config", "expired@config", "file-one@file");
        JsonNode team = listed.path("keys").get(0);
        assertThat(team.path("team").asText()).isEqualTo("alpha");
        assertThat(team.path("models").toString()).isEqualTo("[\"openai/*\",\"anthropic/*\",\"gemini/*\"]");
        assertThat(team.path("metadata").toString()).isEqualTo("{\"env\":\"test\"}");
        assertThat(team.path("limits").toString()).isEqualTo("{\"limit.rpm\":\"60\",\"limit.tpm\":\"100000\","
            + "\"limit.max_concurrent\":\"4\",\"budget.amount\":\"12.5\",\"budget.period\":\"month\"}");
        assertThat(team.path("expires").isNull()).isTrue();
        JsonNode expired = listed.path("keys").get(2);
        assertThat(expired.path("expires").asText()).isEqualTo("2020-01-01T00:00:00Z");
        assertThat(expired.path("expired").asBoolean()).isTrue();
        for (String secret : SECRETS)
            assertThat(r.body()).doesNotContain(secret);
    }

    // -----------------------------------------------------------------------------------------------------------------
    // Config errors, check mode and the command line
    // -----------------------------------------------------------------------------------------------------------------

    @Test
    void configMistakesAreStartupErrorsThatNameThePathAndNeverQuoteAHash() throws Exception
    {
        String hash = sha256(TEAM_KEY);
        assertThat(checkError("keys: [ { id: a, key: \"" + TEAM_KEY + "\" } ]"))
            .startsWith("bindings.keys.options.keys[0].key: plaintext keys are not accepted")
            .contains("sluice keys new").doesNotContain(TEAM_KEY);
        assertThat(checkError("keys: [ { id: a, sha256: \"" + hash + "\" }, { id: a, sha256: \"" + sha256(FILE_KEY_1) + "\" } ]"))
            .isEqualTo("bindings.keys.options.keys[1].id: duplicate id \"a\" (also bindings.keys.options.keys[0];"
                + " expected: unique ids)");
        assertThat(checkError("keys: [ { id: a, sha256: \"" + hash + "\" }, { id: b, sha256: \"" + hash.toUpperCase() + "\" } ]"))
            .isEqualTo("bindings.keys.options.keys[1].sha256: the same key as bindings.keys.options.keys[0] (id a;"
                + " expected: one definition per key)");
        assertThat(checkError("keys: [ { id: a, sha256: \"" + hash.substring(1) + "\" } ]"))
            .startsWith("bindings.keys.options.keys[0].sha256: is not 64 hexadecimal digits").doesNotContain(hash.substring(1));
        assertThat(checkError("keys: [ { id: a, sha256: \"" + hash + "\", expires: \"tomorrow\" } ]"))
            .isEqualTo("bindings.keys.options.keys[0].expires: value: \"tomorrow\" (expected: an ISO-8601 instant such as"
                + " 2027-01-31T00:00:00Z)");
        assertThat(checkError("keys: [ { id: a, sha256: \"" + hash + "\", limits: { budget: 5 } } ]"))
            .isEqualTo("bindings.keys.options.keys[0].limits.budget_period: must be set with budget (expected: Nd or month)");
        assertThat(checkError("keys: [ { id: a, sha256: \"" + hash + "\", models: [] } ]"))
            .startsWith("bindings.keys.options.keys[0].models: value: [] (expected: at least one model glob");
        assertThat(checkError("")).startsWith("bindings.keys.options.keys: no keys and no file");
        assertThat(checkError("keys: [ { id: a, sha256: \"" + hash + "\", metadata: { limit.rpm: \"5\" } } ]"))
            .startsWith("bindings.keys.options.keys[0].metadata.limit.rpm: reserved or blank name");
    }

    @Test
    void checkModeValidatesTheOptionsButOpensNoFile() throws Exception
    {
        Path missing = dir.resolve("not-there.yaml");
        Path file = Files.writeString(dir.resolve("check.yaml"), config(missing, "5s"));
        List<String> names = Sluice.check(Sluice.options(file, TestDist.plugins()).env(UPSTREAM_KEYS::get));
        assertThat(names).contains("keys");
        // Serving the same config reads the file, and its absence is a startup error naming the option.
        assertThatThrownBy(() -> Sluice.start(Sluice.options(file, TestDist.plugins()).port(0).adminPort(0)
                .env(UPSTREAM_KEYS::get)))
            .isInstanceOf(ConfigException.class)
            .hasMessage("bindings.keys.options.file: " + missing + ": no such file");
    }

    @Test
    void keysNewPrintsAKeyWhoseConfigLineAdmitsIt() throws Exception
    {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        int code = Main.keys(new String[]{"keys", "new"}, new ByteArrayInputStream(new byte[0]),
            new PrintStream(out, true, StandardCharsets.UTF_8), System.err);
        assertThat(code).isZero();
        List<String> lines = out.toString(StandardCharsets.UTF_8).lines().toList();
        String key = lines.get(0);
        SECRETS.add(key);
        assertThat(key).matches("sk-sluice-[A-Za-z0-9_-]{43}");
        String configLine = lines.get(lines.size() - 1);
        assertThat(configLine).isEqualTo("- { id: CHANGE-ME, sha256: \"" + sha256(key) + "\" }");
        SECRETS.add(sha256(key));

        ByteArrayOutputStream hashed = new ByteArrayOutputStream();
        assertThat(Main.keys(new String[]{"keys", "hash"}, new ByteArrayInputStream((key + "\n").getBytes(StandardCharsets.UTF_8)),
            new PrintStream(hashed, true, StandardCharsets.UTF_8), System.err)).isZero();
        assertThat(hashed.toString(StandardCharsets.UTF_8).strip()).isEqualTo(sha256(key));

        // Pasted as printed into a keys list, the line admits the key.
        String yaml = """
            listen: { host: 127.0.0.1, port: 0 }
            bindings:
              north: { type: openai, kind: server, exit: keys }
              keys:
                type: keys
                kind: proxy
                exit: south
                options:
                  keys:
                    %s
              south: { type: mock, kind: client }
            """.formatted(configLine);
        try (GatewayHarness g = GatewayHarness.start(dir, yaml, TestDist.plugins(), Map.of()))
        {
            assertThat(chat(g, "openai", key, "any-model").statusCode()).isEqualTo(200);
            assertThat(chat(g, "openai", key + "x", "any-model").statusCode()).isEqualTo(401);
        }
    }

    // -----------------------------------------------------------------------------------------------------------------
    // Helpers
    // -----------------------------------------------------------------------------------------------------------------

    private static String config(Path file, String reloadInterval)
    {
        String http = "{ version: http/1.1, first_byte_timeout: 15s, idle_timeout: 15s }";
        return """
            listen: { host: 127.0.0.1, port: 0 }
            admin: { host: 127.0.0.1, port: 9091 }
            bindings:
              north_openai: { type: openai, kind: server, exit: keys }
              north_anthropic: { type: anthropic, kind: server, exit: keys }
              north_gemini: { type: gemini, kind: server, exit: keys }
              keys:
                type: keys
                kind: proxy
                exit: router
                options:
                  keys:
                    - id: team-a
                      sha256: "%3$s"
                      team: alpha
                      models: %4$s
                      metadata: { env: test }
                      limits: { rpm: 60, tpm: 100000, max_concurrent: 4, budget: 12.50, budget_period: month }
                    - { id: narrow, sha256: "%5$s", models: [ "openai/mock-model", "gemini/mock-?odel" ] }
                    - { id: expired, sha256: "%6$s", expires: "2020-01-01T00:00:00Z" }
                  %7$s
                  reload_interval: %8$s
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
                options: { url: "%1$s/v1", api_key: "${{env.OPENAI_KEY}}", http: %2$s }
              south_anthropic:
                type: anthropic
                kind: client
                options: { url: "%1$s/v1", api_key: "${{env.ANTHROPIC_KEY}}", http: %2$s }
              south_gemini:
                type: gemini
                kind: client
                options: { url: "%1$s/v1beta", api_key: "${{env.GEMINI_KEY}}", http: %2$s }
            """.formatted("http://127.0.0.1:" + mock.port(), http, sha256(TEAM_KEY), MODELS, sha256(NARROW_KEY),
            sha256(EXPIRED_KEY), file == null ? "" : "file: \"" + file + "\"", reloadInterval);
    }

    private static String checkError(String options) throws IOException
    {
        String yaml = """
            listen: { host: 127.0.0.1, port: 0 }
            bindings:
              north: { type: openai, kind: server, exit: keys }
              keys: { type: keys, kind: proxy, exit: south, options: { %s } }
              south: { type: mock, kind: client }
            """.formatted(options);
        Path file = Files.createTempFile(dir, "check", ".yaml");
        Files.writeString(file, yaml);
        try
        {
            Sluice.check(Sluice.options(file, TestDist.plugins()));
        }
        catch (ConfigException e)
        {
            return e.getMessage();
        }
        throw new AssertionError("accepted: " + options);
    }

    private static String fileKey(String id, String key, String expires)
    {
        return "  - { id: " + id + ", sha256: \"" + sha256(key) + "\", team: files, models: " + MODELS
            + (expires == null ? "" : ", expires: \"" + expires + "\"") + " }\n";
    }

    private static void writeKeysFile(String entries) throws IOException
    {
        // Written beside and moved into place, as an operator should: the watch never sees half a file.
        Path next = keysFile.resolveSibling("keys.yaml.next");
        Files.writeString(next, entries.startsWith("keys") ? entries : "keys:\n" + entries);
        Files.move(next, keysFile, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    }

    private static ChatCompletionCreateParams ask(String model)
    {
        return ChatCompletionCreateParams.builder().model(model).addUserMessage("Say hello").build();
    }

    private static MessageCreateParams askAnthropic(String model)
    {
        return MessageCreateParams.builder().model(model).maxTokens(100).addUserMessage("Say hello").build();
    }

    private static OpenAIClient openai(String key)
    {
        return SdkClients.openai(gateway.url(""), key);
    }

    private static AnthropicClient anthropic(String key)
    {
        return SdkClients.anthropic(gateway.url(""), key);
    }

    private static Client genai(String key)
    {
        return SdkClients.genai(gateway.url(""), key);
    }

    private static HttpResponse<String> chat(String dialect, String key, String model) throws Exception
    {
        return chat(gateway, dialect, key, model);
    }

    /** A chat request body of {@code dialect} for {@code model} (Gemini's model is in the path, not the body). */
    private static String chatBody(String dialect, String model)
    {
        return switch (dialect)
        {
            case "openai" -> "{\"model\":\"" + model + "\",\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]}";
            case "anthropic" -> "{\"model\":\"" + model + "\",\"max_tokens\":50,\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]}";
            default -> "{\"contents\":[{\"role\":\"user\",\"parts\":[{\"text\":\"Hi\"}]}]}";
        };
    }

    /** A chat request to this class's gateway in {@code dialect}, streamed or not, with {@code key} the SDKs' way. */
    private static HttpRequest chatRequest(String dialect, String key, String model, boolean stream)
    {
        String body = chatBody(dialect, model);
        HttpRequest.Builder b = switch (dialect)
        {
            case "openai" -> HttpRequest.newBuilder(URI.create(gateway.url("/v1/chat/completions")))
                .header("authorization", "Bearer " + key);
            case "anthropic" -> HttpRequest.newBuilder(URI.create(gateway.url("/v1/messages")))
                .header("anthropic-version", "2023-06-01").header("x-api-key", key);
            default -> HttpRequest.newBuilder(URI.create(gateway.url("/v1beta/models/" + model
                    + (stream ? ":streamGenerateContent?alt=sse" : ":generateContent"))))
                .header("x-goog-api-key", key);
        };
        if (stream && !dialect.equals("gemini"))
            body = body.replaceFirst("^\\{", "{\"stream\":true,");
        return b.header("content-type", "application/json").POST(HttpRequest.BodyPublishers.ofString(body)).build();
    }

    /** One non-streamed chat request in {@code dialect}, with {@code key} where that dialect's SDK puts it (or none). */
    private static HttpResponse<String> chat(GatewayHarness g, String dialect, String key, String model) throws Exception
    {
        HttpRequest.Builder b;
        switch (dialect)
        {
            case "openai" ->
            {
                b = HttpRequest.newBuilder(URI.create(g.url("/v1/chat/completions"))).POST(HttpRequest.BodyPublishers
                    .ofString("{\"model\":\"" + model + "\",\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]}"));
                if (key != null)
                    b.header("authorization", "Bearer " + key);
            }
            case "anthropic" ->
            {
                b = HttpRequest.newBuilder(URI.create(g.url("/v1/messages"))).POST(HttpRequest.BodyPublishers
                    .ofString("{\"model\":\"" + model + "\",\"max_tokens\":50,\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]}"))
                    .header("anthropic-version", "2023-06-01");
                if (key != null)
                    b.header("x-api-key", key);
            }
            default ->
            {
                b = HttpRequest.newBuilder(URI.create(g.url("/v1beta/models/" + model + ":generateContent")))
                    .POST(HttpRequest.BodyPublishers.ofString("{\"contents\":[{\"role\":\"user\",\"parts\":[{\"text\":\"Hi\"}]}]}"));
                if (key != null)
                    b.header("x-goog-api-key", key);
            }
        }
        return send(b.header("content-type", "application/json").build());
    }

    private static HttpResponse<String> send(HttpRequest request)
    {
        try
        {
            return http.send(request, HttpResponse.BodyHandlers.ofString());
        }
        catch (IOException e)
        {
            throw new UncheckedIOException(e);
        }
        catch (InterruptedException e)
        {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    private static HttpResponse<String> post(String url)
    {
        return send(HttpRequest.newBuilder(URI.create(url)).POST(HttpRequest.BodyPublishers.noBody()).build());
    }

    private static HttpResponse<String> get(String url)
    {
        return send(HttpRequest.newBuilder(URI.create(url)).GET().build());
    }

    private static JsonNode json(HttpResponse<String> r) throws IOException
    {
        return Json.MAPPER.readTree(r.body());
    }

    /** The dialect's error envelope with {@code message}, the status, a JSON content type, and the gateway's request id. */
    private static void assertDialectError(String dialect, HttpResponse<String> r, int status, String message) throws IOException
    {
        assertThat(r.statusCode()).as(r.body()).isEqualTo(status);
        assertThat(r.headers().firstValue("content-type")).hasValueSatisfying(v -> assertThat(v).startsWith("application/json"));
        assertThat(r.headers().firstValue("x-request-id")).isPresent();
        JsonNode body = json(r);
        switch (dialect)
        {
            case "openai" ->
            {
                assertThat(body.path("error").path("message").asText()).isEqualTo(message);
                assertThat(body.path("error").path("type").asText())
                    .isEqualTo(status == 401 ? "authentication_error" : "permission_error");
                assertThat(body.has("type")).isFalse();
            }
            case "anthropic" ->
            {
                assertThat(body.path("type").asText()).isEqualTo("error");
                assertThat(body.path("error").path("type").asText())
                    .isEqualTo(status == 401 ? "authentication_error" : "permission_error");
                assertThat(body.path("error").path("message").asText()).isEqualTo(message);
            }
            default ->
            {
                assertThat(body.path("error").path("code").asInt()).isEqualTo(status);
                assertThat(body.path("error").path("status").asText())
                    .isEqualTo(status == 401 ? "UNAUTHENTICATED" : "PERMISSION_DENIED");
                assertThat(body.path("error").path("message").asText()).isEqualTo(message);
            }
        }
    }

    /** The provider got its own key the way its dialect sends it, and nothing of the client's anywhere. */
    private static void assertOnlyTheProviderKey(String provider, RecordedRequest sent, String clientKey)
    {
        assertThat(sent).isNotNull();
        switch (provider)
        {
            case "openai" -> assertThat(sent.header("authorization")).isEqualTo("Bearer " + UPSTREAM_KEYS.get("OPENAI_KEY"));
            case "anthropic" ->
            {
                assertThat(sent.header("x-api-key")).isEqualTo(UPSTREAM_KEYS.get("ANTHROPIC_KEY"));
                assertThat(sent.hasHeader("authorization")).isFalse();
            }
            default ->
            {
                assertThat(sent.header("x-goog-api-key")).isEqualTo(UPSTREAM_KEYS.get("GEMINI_KEY"));
                assertThat(sent.hasHeader("authorization")).isFalse();
            }
        }
        for (RecordedRequest.Header header : sent.headers())
        {
            assertThat(header.value()).as("header %s", header.name()).doesNotContain(clientKey)
                .doesNotContain(sha256(clientKey));
        }
        assertThat(sent.query() == null ? "" : sent.query()).doesNotContain(clientKey);
        assertThat(sent.path()).doesNotContain(clientKey);
        assertThat(sent.bodyAsString()).doesNotContain(clientKey);
    }

    private static String sha256(String key)
    {
        try
        {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(key.getBytes(StandardCharsets.UTF_8)));
        }
        catch (java.security.NoSuchAlgorithmException e)
        {
            throw new IllegalStateException(e);
        }
    }

    // -----------------------------------------------------------------------------------------------------------------
    // The log: captured from jetty-slf4j-impl, the runtime's SLF4J backend
    // -----------------------------------------------------------------------------------------------------------------

    private static void captureLog()
    {
        JettyLogger root = (JettyLogger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
        StdErrAppender appender = (StdErrAppender) root.getAppender();
        originalStream = appender.getStream();
        // null: the appender writes to whatever System.err is when it logs.
        PrintStream original = originalStream != null ? originalStream : System.err;
        appender.setStream(new PrintStream(new OutputStream()
        {
            @Override
            public void write(int b)
            {
                synchronized (LOG)
                {
                    LOG.write(b);
                }
                original.write(b);
            }

            @Override
            public void write(byte[] b, int off, int len)
            {
                synchronized (LOG)
                {
                    LOG.write(b, off, len);
                }
                original.write(b, off, len);
            }
        }, true, StandardCharsets.UTF_8));
        originalLevel = ((JettyLogger) LoggerFactory.getLogger("dev.sluice")).getLevel();
        debugLogging();
    }

    /**
     * Everything Sluice and its plugins log, down to DEBUG, while this class runs. Setting a level reaches the loggers
     * that exist, not those created later (a plugin's, once its classes load): so again after each start.
     */
    private static void debugLogging()
    {
        ((JettyLogger) LoggerFactory.getLogger("dev.sluice")).setLevel(JettyLevel.DEBUG);
    }

    private static void restoreLog()
    {
        JettyLogger root = (JettyLogger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
        ((StdErrAppender) root.getAppender()).setStream(originalStream);
        ((JettyLogger) LoggerFactory.getLogger("dev.sluice")).setLevel(originalLevel);
    }

    private static String logText()
    {
        synchronized (LOG)
        {
            return LOG.toString(StandardCharsets.UTF_8);
        }
    }

    private static void noKeyMaterialInAnyLogLine()
    {
        String log = logText();
        assertThat(log).as("the captured log").contains("bindings.keys: keys file");
        for (String line : log.split("\n"))
        {
            for (String secret : SECRETS)
                assertThat(line).as("a log line").doesNotContain(secret);
        }
        System.out.println("KeysPluginTest: scanned " + log.lines().count() + " log lines for " + SECRETS.size()
            + " keys and hashes: none found");
    }
}
