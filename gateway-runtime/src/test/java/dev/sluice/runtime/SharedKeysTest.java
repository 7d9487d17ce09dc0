package dev.sluice.runtime;

import com.anthropic.errors.UnauthorizedException;
import com.anthropic.models.ErrorType;
import com.anthropic.models.messages.MessageCreateParams;
import com.fasterxml.jackson.databind.JsonNode;
import com.openai.models.chat.completions.ChatCompletion;
import com.openai.models.chat.completions.ChatCompletionCreateParams;
import dev.sluice.support.json.Json;
import dev.sluice.support.testing.RedisServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Keys across replicas, end to end: three gateways (each with the distribution's plugin jars and its own connections to
 * Redis, as three processes would have) share one real redis-server through their {@code keys} bindings' store. Keys are
 * added and revoked through one gateway's admin endpoint and the others are asked with the official SDKs and raw HTTP.
 * The waits are generous — a starved machine is slow — and each logs how long the change took to apply; the documented
 * bound is the {@code refresh} of 300ms.
 */
class SharedKeysTest
{
    private static final String KEY_A = "sk-sluice-replica-a-0123456789abcdefghijklmnopqrstuvwxyz";
    private static final String KEY_B = "sk-sluice-replica-b-0123456789abcdefghijklmnopqrstuvwxyz";
    private static final String KEY_C = "sk-sluice-replica-c-0123456789abcdefghijklmnopqrstuvwxyz";
    private static final String ADDED = "sk-sluice-added-at-runtime-0123456789abcdefghijklmnopqrs";
    private static final String ADDED_WHILE_AWAY = "sk-sluice-added-while-away-0123456789abcdefghijklmnopqr";
    private static final String ADDED_AFTER = "sk-sluice-added-after-return-0123456789abcdefghijklmnop";
    private static final Duration PATIENCE = Duration.ofSeconds(20);

    @TempDir
    static Path dir;

    private static RedisServer redis;
    private static final List<GatewayHarness> gateways = new ArrayList<>();
    private static HttpClient http;

    @BeforeAll
    static void start() throws Exception
    {
        redis = RedisServer.started();
        http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
        for (int i = 0; i < 3; i++)
        {
            // A client name per gateway gives each its own connections to the one server, as separate processes have.
            gateways.add(GatewayHarness.start(dir, config(), TestDist.plugins(),
                Map.of("REDIS_URL", redis.url() + "?clientName=gateway-" + i)));
        }
        for (GatewayHarness gateway : gateways)
            eventually("the gateway read the store", () -> !listing(gateway).path("store").path("version").isNull());
    }

    @AfterAll
    static void stop() throws Exception
    {
        for (GatewayHarness gateway : gateways)
            gateway.close();
        if (redis != null)
            redis.close();
    }

    private static String config()
    {
        return """
            listen: { host: 127.0.0.1, port: 0 }
            admin: { host: 127.0.0.1, port: 9091 }
            bindings:
              north_openai: { type: openai, kind: server, exit: keys }
              north_anthropic: { type: anthropic, kind: server, exit: keys }
              keys:
                type: keys
                kind: proxy
                exit: south
                options:
                  keys:
                    - { id: team-a, sha256: "%s" }
                    - { id: team-b, sha256: "%s" }
                    - { id: team-c, sha256: "%s" }
                  store:
                    redis: { url: "${{env.REDIS_URL}}", prefix: "e2e:", timeout: 1s }
                    refresh: 300ms
              south: { type: mock, kind: client }
            """.formatted(sha256(KEY_A), sha256(KEY_B), sha256(KEY_C));
    }

    @Test
    void aKeyRevokedThroughOneReplicaIsRefusedByTheOthersInTheirClientsDialect() throws Exception
    {
        for (GatewayHarness gateway : gateways)
            assertThat(chat(gateway, KEY_A).statusCode()).isEqualTo(200);

        HttpResponse<String> revoked = admin(gateways.get(0), "DELETE", "/keys/team-a", null);
        assertThat(revoked.statusCode()).as(revoked.body()).isEqualTo(200);
        long at = System.nanoTime();
        assertThat(chat(gateways.get(0), KEY_A).statusCode()).isEqualTo(401);
        for (GatewayHarness other : gateways.subList(1, 3))
            applied("the revocation", at, () -> chat(other, KEY_A).statusCode() == 401);

        assertThatThrownBy(() -> SdkClients.openai(gateways.get(1).url(""), KEY_A).chat().completions().create(ask()))
            .isInstanceOfSatisfying(com.openai.errors.UnauthorizedException.class, e ->
            {
                assertThat(e.statusCode()).isEqualTo(401);
                assertThat(e.code()).hasValue("invalid_api_key");
            });
        assertThatThrownBy(() -> SdkClients.anthropic(gateways.get(2).url(""), KEY_A).messages().create(askAnthropic()))
            .isInstanceOfSatisfying(UnauthorizedException.class, e ->
            {
                assertThat(e.statusCode()).isEqualTo(401);
                assertThat(e.errorType()).hasValue(ErrorType.AUTHENTICATION_ERROR);
            });
        // Every replica lists the revocation.
        for (GatewayHarness gateway : gateways)
            assertThat(listing(gateway).path("store").path("revoked").toString()).contains("\"team-a\"");
    }

    @Test
    void aKeyAddedThroughOneReplicaIsAcceptedByTheOthers() throws Exception
    {
        for (GatewayHarness gateway : gateways)
            assertThat(chat(gateway, ADDED).statusCode()).isEqualTo(401);

        HttpResponse<String> added = admin(gateways.get(1), "POST", "/keys",
            "{\"id\": \"added\", \"key\": \"" + ADDED + "\", \"team\": \"ops\", \"models\": [\"mock*\", \"gpt-*\"]}");
        assertThat(added.statusCode()).as(added.body()).isEqualTo(201);
        assertThat(added.body()).doesNotContain(ADDED).doesNotContain(sha256(ADDED));
        long at = System.nanoTime();
        for (GatewayHarness other : List.of(gateways.get(0), gateways.get(2)))
            applied("the addition", at, () -> chat(other, ADDED).statusCode() == 200);

        ChatCompletion completion = SdkClients.openai(gateways.get(2).url(""), ADDED).chat().completions().create(ask());
        assertThat(completion.choices()).isNotEmpty();
        JsonNode key = null;
        for (JsonNode k : listing(gateways.get(0)).path("keys"))
        {
            if (k.path("id").asText().equals("added"))
                key = k;
        }
        assertThat(key).isNotNull();
        assertThat(key.path("source").asText()).isEqualTo("store");
        assertThat(key.path("team").asText()).isEqualTo("ops");
    }

    @Test
    void whileRedisIsAwayTheLastKeysHoldAndWritesAre503_andAfterItReturnsChangesFlowAgain() throws Exception
    {
        HttpResponse<String> added = admin(gateways.get(0), "POST", "/keys",
            "{\"id\": \"while-away\", \"key\": \"" + ADDED_WHILE_AWAY + "\"}");
        assertThat(added.statusCode()).as(added.body()).isEqualTo(201);
        assertThat(admin(gateways.get(0), "DELETE", "/keys/team-b", null).statusCode()).isEqualTo(200);
        for (GatewayHarness gateway : gateways)
            eventually("both changes applied", () -> chat(gateway, ADDED_WHILE_AWAY).statusCode() == 200
                && chat(gateway, KEY_B).statusCode() == 401);

        redis.stop();
        try
        {
            for (GatewayHarness gateway : gateways)
                eventually("the gateway noticed", () -> !listing(gateway).path("store").path("error").isNull());
            for (GatewayHarness gateway : gateways)
            {
                assertThat(chat(gateway, ADDED_WHILE_AWAY).statusCode()).isEqualTo(200);
                assertThat(chat(gateway, KEY_B).statusCode()).isEqualTo(401);
                assertThat(chat(gateway, KEY_C).statusCode()).isEqualTo(200);
            }
            HttpResponse<String> refused = admin(gateways.get(1), "POST", "/keys",
                "{\"id\": \"after\", \"key\": \"" + ADDED_AFTER + "\"}");
            assertThat(refused.statusCode()).as(refused.body()).isEqualTo(503);
            assertThat(admin(gateways.get(2), "DELETE", "/keys/team-c", null).statusCode()).isEqualTo(503);
        }
        finally
        {
            redis.start();
        }

        // Back without its data: the replicas write their keys back, so the revocation of team-b still holds.
        eventually("the store was written back", () -> redis.command("HEXISTS", "e2e:{keys}:revoked", "team-b")
            .equals(1L));
        for (GatewayHarness gateway : gateways)
            eventually("the gateway reads the store again", () -> listing(gateway).path("store").path("error").isNull());
        for (GatewayHarness gateway : gateways)
        {
            assertThat(chat(gateway, KEY_B).statusCode()).isEqualTo(401);
            assertThat(chat(gateway, ADDED_WHILE_AWAY).statusCode()).isEqualTo(200);
        }

        // Changes flow again, including one made while a replica's subscriber is reconnecting: its announcement is
        // lost to that replica, and the version poll catches it.
        killSubscriber("gateway-2");
        HttpResponse<String> revoked = admin(gateways.get(0), "DELETE", "/keys/team-c", null);
        assertThat(revoked.statusCode()).as(revoked.body()).isEqualTo(200);
        long at = System.nanoTime();
        for (GatewayHarness other : gateways.subList(1, 3))
            applied("the revocation after the return", at, () -> chat(other, KEY_C).statusCode() == 401);
        assertThat(admin(gateways.get(2), "POST", "/keys", "{\"id\": \"after\", \"key\": \"" + ADDED_AFTER + "\"}")
            .statusCode()).isEqualTo(201);
        at = System.nanoTime();
        for (GatewayHarness other : gateways.subList(0, 2))
            applied("the addition after the return", at, () -> chat(other, ADDED_AFTER).statusCode() == 200);
    }

    @Test
    void theAdminEndpointsRefuseWhatTheyCannotDo() throws Exception
    {
        GatewayHarness gateway = gateways.get(0);
        assertThat(admin(gateway, "DELETE", "/keys/nobody", null).statusCode()).isEqualTo(404);
        assertThat(admin(gateway, "DELETE", "/keys", null).statusCode()).as("no id").isEqualTo(405);
        assertThat(admin(gateway, "POST", "/keys", "{\"id\": ").statusCode()).isEqualTo(400);
        HttpResponse<String> plaintextAndHash = admin(gateway, "POST", "/keys", "{\"id\": \"x\", \"key\": \"" + ADDED
            + "\", \"sha256\": \"" + sha256(ADDED) + "\"}");
        assertThat(plaintextAndHash.statusCode()).isEqualTo(400);
        assertThat(plaintextAndHash.body()).doesNotContain(ADDED).doesNotContain(sha256(ADDED));
        // POST /keys/reload stays the reload endpoint beside POST /keys and DELETE /keys/*: this binding has no file.
        assertThat(admin(gateway, "POST", "/keys/reload", null).statusCode()).isEqualTo(409);
    }

    /** Closes the pub/sub connection of the gateway whose client name is {@code name}; it reconnects by itself. */
    private static void killSubscriber(String name) throws Exception
    {
        String clients = (String) redis.command("CLIENT", "LIST", "TYPE", "pubsub");
        for (String line : clients.split("\n"))
        {
            if (line.contains(" name=" + name + " "))
            {
                String id = line.substring(line.indexOf("id=") + 3, line.indexOf(' ', line.indexOf("id=")));
                redis.command("CLIENT", "KILL", "ID", id);
                return;
            }
        }
        throw new AssertionError("no subscriber named " + name + " in " + clients);
    }

    private static ChatCompletionCreateParams ask()
    {
        return ChatCompletionCreateParams.builder().model("gpt-4o").addUserMessage("Say hello").build();
    }

    private static MessageCreateParams askAnthropic()
    {
        return MessageCreateParams.builder().model("claude-sonnet-4").maxTokens(100).addUserMessage("Say hello").build();
    }

    private static HttpResponse<String> chat(GatewayHarness gateway, String key) throws Exception
    {
        return http.send(HttpRequest.newBuilder(URI.create(gateway.url("/v1/chat/completions")))
            .header("authorization", "Bearer " + key).header("content-type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString(
                "{\"model\":\"gpt-4o\",\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]}"))
            .build(), HttpResponse.BodyHandlers.ofString());
    }

    private static HttpResponse<String> admin(GatewayHarness gateway, String method, String path, String body)
        throws Exception
    {
        return http.send(HttpRequest.newBuilder(URI.create(gateway.adminUrl(path)))
            .header("content-type", "application/json")
            .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body))
            .build(), HttpResponse.BodyHandlers.ofString());
    }

    private static JsonNode listing(GatewayHarness gateway) throws Exception
    {
        HttpResponse<String> listed = admin(gateway, "GET", "/keys", null);
        assertThat(listed.statusCode()).isEqualTo(200);
        return Json.MAPPER.readTree(listed.body());
    }

    @FunctionalInterface
    private interface Check
    {
        boolean holds() throws Exception;
    }

    private static void eventually(String what, Check check) throws Exception
    {
        long deadline = System.nanoTime() + PATIENCE.toNanos();
        while (!check.holds())
        {
            assertThat(System.nanoTime() < deadline).as(what + " within " + PATIENCE).isTrue();
            Thread.sleep(10);
        }
    }

    /** Waits for {@code check} and prints how long after {@code since} it held. */
    private static void applied(String what, long since, Check check) throws Exception
    {
        eventually(what, check);
        System.out.printf("%s applied on another replica after %d ms (bound: refresh, 300 ms)%n", what,
            (System.nanoTime() - since) / 1_000_000);
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
}
