package dev.sluice.plugin.keys;

import com.fasterxml.jackson.databind.JsonNode;
import dev.sluice.api.GatewayException;
import dev.sluice.api.admin.AdminRoutes;
import dev.sluice.api.admin.AdminRoutes.AdminHandler;
import dev.sluice.api.admin.AdminRoutes.AdminRequest;
import dev.sluice.api.admin.AdminRoutes.AdminResponse;
import dev.sluice.api.binding.BindingConfig;
import dev.sluice.api.binding.BindingConfig.BindingKind;
import dev.sluice.api.binding.BindingContext;
import dev.sluice.api.binding.ProxyBinding;
import dev.sluice.api.exchange.Next;
import dev.sluice.api.exchange.Reply;
import dev.sluice.api.testing.TestExchange;
import dev.sluice.api.upstream.Upstream;
import dev.sluice.api.upstream.UpstreamOptions;
import dev.sluice.support.json.Json;
import dev.sluice.support.testing.LiveScheduler;
import dev.sluice.support.testing.RedisServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.function.BooleanSupplier;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The keys store as replicas share it: two {@code keys} bindings, each with its own connection, executor and scheduler
 * (two gateways), against one real redis-server. Changes are made through the bindings' own admin endpoints and checked
 * by what each binding answers a request. Waits are generous (a starved machine is slow); what they wait for is the
 * behaviour, not a time.
 */
class SharedKeysStoreTest
{
    private static final String CONFIG_KEY = "sk-sluice-config-0123456789abcdefghijklmnopqrstuvwxyz";
    private static final String ADDED_KEY = "sk-sluice-added-0123456789abcdefghijklmnopqrstuvwxyzAB";
    private static final String OTHER_KEY = "sk-sluice-other-0123456789abcdefghijklmnopqrstuvwxyzAB";
    private static final Duration PATIENCE = Duration.ofSeconds(20);

    private RedisServer redis;
    private final List<Replica> replicas = new ArrayList<>();

    @BeforeEach
    void start() throws Exception
    {
        redis = RedisServer.started();
    }

    @AfterEach
    void stop()
    {
        for (Replica replica : replicas)
            replica.close();
        redis.close();
    }

    /** One gateway's keys binding, with its own threads, admin routes and Redis connection. */
    private final class Replica implements BindingContext, AutoCloseable
    {
        final String name;
        final ExecutorService executor;
        final ScheduledExecutorService scheduler;
        final Map<String, AdminHandler> admin = new ConcurrentHashMap<>();
        final ProxyBinding binding;

        Replica(String name, String onUnavailable)
        {
            this.name = name;
            this.executor = Executors.newFixedThreadPool(2, r -> new Thread(r, "executor-" + name));
            this.scheduler = Executors.newSingleThreadScheduledExecutor(r -> new Thread(r, "scheduler-" + name));
            // One URL per replica (the client name differs), so that each has its connections, as separate processes do.
            String options = "{\"keys\": [ {\"id\": \"config-key\", \"sha256\": \"" + KeyTable.sha256Hex(CONFIG_KEY) + "\"} ],"
                + " \"store\": { \"redis\": { \"url\": \"" + redis.url() + "?clientName=" + name + "\", \"prefix\": \"t:\","
                + " \"timeout\": \"2s\" }, \"refresh\": \"200ms\""
                + (onUnavailable == null ? "" : ", \"on_unavailable\": \"" + onUnavailable + "\"") + " } }";
            try
            {
                this.binding = new KeysFactory().create(new BindingConfig("keys", "keys", BindingKind.PROXY,
                    Json.MAPPER.readTree(options), "next", List.of()), this);
            }
            catch (java.io.IOException e)
            {
                throw new IllegalArgumentException(e);
            }
            replicas.add(this);
        }

        /** @return the status this replica answers a request with {@code key}: 200 when it passed the key on */
        int status(String key)
        {
            try
            {
                binding.handle(new TestExchange("gpt-4o").clientKey(key), this.exit("next")).toCompletableFuture().join();
                return 200;
            }
            catch (CompletionException e)
            {
                return ((GatewayException) e.getCause()).status();
            }
        }

        AdminResponse admin(String method, String path, String body)
        {
            AdminHandler handler = admin.get(method + " " + path);
            if (handler == null && method.equals("DELETE"))
                handler = admin.get("DELETE /keys/*");
            assertThat(handler).as(method + " " + path).isNotNull();
            return handler.handle(new AdminRequest(method, path, null, null,
                body == null ? new byte[0] : body.getBytes(StandardCharsets.UTF_8))).toCompletableFuture().join();
        }

        JsonNode listing() throws Exception
        {
            AdminResponse listed = admin("GET", "/keys", null);
            assertThat(listed.status()).isEqualTo(200);
            return Json.MAPPER.readTree(listed.body());
        }

        Replica readTheStore() throws Exception
        {
            eventually(name + " read the store", () -> !listingUnchecked().path("store").path("version").isNull());
            return this;
        }

        private JsonNode listingUnchecked()
        {
            try
            {
                return listing();
            }
            catch (Exception e)
            {
                throw new IllegalStateException(e);
            }
        }

        @Override
        public Next exit(String bindingName)
        {
            return exchange -> CompletableFuture.completedFuture(
                new Reply.Bytes(200, "text/plain", new byte[0], null, null));
        }

        @Override
        public Upstream upstream(UpstreamOptions options)
        {
            throw new UnsupportedOperationException();
        }

        @Override
        public String env(String variable)
        {
            return null;
        }

        @Override
        public java.util.concurrent.Executor executor()
        {
            return executor;
        }

        @Override
        public Scheduler scheduler()
        {
            return LiveScheduler.on(scheduler);
        }

        @Override
        public AdminRoutes admin()
        {
            return (method, path, handler) -> admin.put(method + " " + path, handler);
        }

        @Override
        public void close()
        {
            binding.close();
            scheduler.shutdownNow();
            executor.shutdownNow();
        }
    }

    private static void eventually(String what, BooleanSupplier condition) throws InterruptedException
    {
        long deadline = System.nanoTime() + PATIENCE.toNanos();
        while (!condition.getAsBoolean())
        {
            assertThat(System.nanoTime() < deadline).as(what + " within " + PATIENCE).isTrue();
            Thread.sleep(10);
        }
    }

    private static String body(AdminResponse response)
    {
        return new String(response.body(), StandardCharsets.UTF_8);
    }

    private static String addition(String id, String key)
    {
        return "{\"id\": \"" + id + "\", \"key\": \"" + key + "\", \"team\": \"beta\", \"models\": [\"gpt-*\"],"
            + " \"limits\": {\"rpm\": 60}}";
    }

    @Test
    void aKeyAddedOnOneReplicaIsAdmittedByTheOther_andTheStoreHoldsItsHashNeverTheKey() throws Exception
    {
        Replica a = new Replica("a", null).readTheStore();
        Replica b = new Replica("b", null).readTheStore();
        assertThat(b.status(ADDED_KEY)).isEqualTo(401);

        AdminResponse added = a.admin("POST", "/keys", addition("added", ADDED_KEY));
        assertThat(added.status()).as(body(added)).isEqualTo(201);
        assertThat(Json.MAPPER.readTree(added.body()).path("added").asText()).isEqualTo("added");
        // Read back before the answer: the replica that took the change has it at once.
        assertThat(a.status(ADDED_KEY)).isEqualTo(200);
        eventually("b admits the added key", () -> b.status(ADDED_KEY) == 200);

        JsonNode listed = b.listing().path("keys");
        JsonNode key = listed.get(1);
        assertThat(key.path("id").asText()).isEqualTo("added");
        assertThat(key.path("source").asText()).isEqualTo("store");
        assertThat(key.path("team").asText()).isEqualTo("beta");
        assertThat(key.path("limits").path("limit.rpm").asText()).isEqualTo("60");

        Object stored = redis.command("HGETALL", "t:{keys}:added");
        assertThat(stored.toString()).contains(KeyTable.sha256Hex(ADDED_KEY)).doesNotContain(ADDED_KEY);
        assertThat(b.listing().toString()).doesNotContain(KeyTable.sha256Hex(ADDED_KEY));
    }

    @Test
    void aConfigKeyRevokedOnOneReplicaIsRefusedByEvery_andTheIdCannotComeBack() throws Exception
    {
        Replica a = new Replica("a", null).readTheStore();
        Replica b = new Replica("b", null).readTheStore();
        assertThat(b.status(CONFIG_KEY)).isEqualTo(200);

        AdminResponse revoked = a.admin("DELETE", "/keys/config-key", null);
        assertThat(revoked.status()).as(body(revoked)).isEqualTo(200);
        assertThat(Json.MAPPER.readTree(revoked.body()).path("changed").asBoolean()).isTrue();
        assertThat(a.status(CONFIG_KEY)).isEqualTo(401);
        eventually("b refuses the revoked key", () -> b.status(CONFIG_KEY) == 401);

        AdminResponse again = b.admin("DELETE", "/keys/config-key", null);
        assertThat(again.status()).isEqualTo(200);
        assertThat(Json.MAPPER.readTree(again.body()).path("changed").asBoolean()).isFalse();
        AdminResponse reused = b.admin("POST", "/keys", addition("config-key", OTHER_KEY));
        assertThat(reused.status()).as(body(reused)).isEqualTo(409);
        assertThat(body(reused)).contains("was revoked");

        // A key added at runtime is revoked the same way, on the other replica.
        assertThat(a.admin("POST", "/keys", addition("added", ADDED_KEY)).status()).isEqualTo(201);
        eventually("b admits the added key", () -> b.status(ADDED_KEY) == 200);
        assertThat(b.admin("DELETE", "/keys/added", null).status()).isEqualTo(200);
        eventually("a refuses the revoked key", () -> a.status(ADDED_KEY) == 401);
        assertThat(redis.command("HLEN", "t:{keys}:hashes")).isEqualTo(0L);
        JsonNode store = a.listing().path("store");
        assertThat(store.path("revoked").toString()).contains("\"config-key\"", "\"added\"");
    }

    @Test
    void aChangeWhoseAnnouncementWasLostAppliesByTheVersionPoll() throws Exception
    {
        Replica a = new Replica("a", null).readTheStore();
        // What a replica sees when it was disconnected while a change was announced: the store changed, no message came.
        redis.command("HSET", "t:{keys}:revoked", "config-key", "2026-01-01T00:00:00Z");
        redis.command("INCR", "t:{keys}:version");
        eventually("the poll applies the revocation", () -> a.status(CONFIG_KEY) == 401);
    }

    @Test
    void whileTheStoreIsAwayTheLastKeysHoldAndWritesAnswer503_andAStoreBackWithoutItsDataIsWrittenBack() throws Exception
    {
        Replica a = new Replica("a", null).readTheStore();
        Replica b = new Replica("b", null).readTheStore();
        assertThat(a.admin("POST", "/keys", addition("added", ADDED_KEY)).status()).isEqualTo(201);
        assertThat(a.admin("DELETE", "/keys/config-key", null).status()).isEqualTo(200);
        eventually("b has both changes", () -> b.status(ADDED_KEY) == 200 && b.status(CONFIG_KEY) == 401);

        redis.stop();
        eventually("b noticed", () -> !b.listingUnchecked().path("store").path("error").isNull());
        assertThat(b.status(ADDED_KEY)).isEqualTo(200);
        assertThat(b.status(CONFIG_KEY)).isEqualTo(401);
        AdminResponse refused = b.admin("POST", "/keys", addition("other", OTHER_KEY));
        assertThat(refused.status()).as(body(refused)).isEqualTo(503);
        assertThat(b.admin("DELETE", "/keys/added", null).status()).isEqualTo(503);

        // Back, empty (no persistence): a replica writes its overlay back, and changes flow again.
        redis.start();
        eventually("the store was written back", () -> commandUnchecked("GET", "t:{keys}:version") != null);
        assertThat(redis.command("HEXISTS", "t:{keys}:revoked", "config-key")).isEqualTo(1L);
        assertThat(b.status(CONFIG_KEY)).isEqualTo(401);
        assertThat(b.status(ADDED_KEY)).isEqualTo(200);
        eventually("a writes again", () -> a.admin("POST", "/keys", addition("other", OTHER_KEY)).status() == 201);
        eventually("b admits the key added after the return", () -> b.status(OTHER_KEY) == 200);
        eventually("b's store error cleared", () -> b.listingUnchecked().path("store").path("error").isNull());
    }

    private Object commandUnchecked(String... args)
    {
        try
        {
            return redis.command(args);
        }
        catch (java.io.IOException e)
        {
            return null;
        }
    }

    @Test
    void failClosedRefusesEveryKeyUntilTheStoreWasReadOnce() throws Exception
    {
        redis.stop();
        Replica open = new Replica("open", null);
        Replica closed = new Replica("closed", "fail_closed");
        assertThat(open.status(CONFIG_KEY)).isEqualTo(200);
        assertThat(closed.status(CONFIG_KEY)).isEqualTo(503);
        redis.start();
        closed.readTheStore();
        assertThat(closed.status(CONFIG_KEY)).isEqualTo(200);
    }

    @Test
    void badAdditionsAndUnknownIdsAreRefusedWithoutChangingTheStore() throws Exception
    {
        Replica a = new Replica("a", null).readTheStore();
        assertThat(a.admin("POST", "/keys", "[]").status()).isEqualTo(400);
        assertThat(a.admin("POST", "/keys", "{\"id\": \"x\"").status()).isEqualTo(400);
        assertThat(body(a.admin("POST", "/keys", "{\"key\": \"" + OTHER_KEY + "\"}"))).contains("id: must be set")
            .doesNotContain(OTHER_KEY);
        assertThat(a.admin("POST", "/keys", "{\"id\": \"x\", \"key\": \"" + OTHER_KEY + "\", \"sha256\": \""
            + KeyTable.sha256Hex(OTHER_KEY) + "\"}").status()).isEqualTo(400);
        assertThat(a.admin("POST", "/keys", "{\"id\": \"x\", \"key\": \"k\", \"colour\": \"red\"}").status()).isEqualTo(400);
        AdminResponse sameId = a.admin("POST", "/keys", addition("config-key", OTHER_KEY));
        assertThat(sameId.status()).isEqualTo(409);
        assertThat(body(sameId)).contains("taken by a key of the config");
        AdminResponse sameKey = a.admin("POST", "/keys", addition("new-id", CONFIG_KEY));
        assertThat(sameKey.status()).isEqualTo(409);
        assertThat(body(sameKey)).contains("the same as config key config-key");
        assertThat(a.admin("DELETE", "/keys/nobody", null).status()).isEqualTo(404);

        AdminResponse bySha = a.admin("POST", "/keys", "{\"id\": \"team/b\", \"sha256\": \""
            + KeyTable.sha256Hex(OTHER_KEY).toUpperCase() + "\"}");
        assertThat(bySha.status()).as(body(bySha)).isEqualTo(201);
        assertThat(a.admin("POST", "/keys", addition("another", OTHER_KEY)).status()).isEqualTo(409);
        // An id with a slash is revoked by its path.
        assertThat(a.admin("DELETE", "/keys/team/b", null).status()).isEqualTo(200);
        assertThat(redis.command("GET", "t:{keys}:version")).isEqualTo("2");
    }
}
