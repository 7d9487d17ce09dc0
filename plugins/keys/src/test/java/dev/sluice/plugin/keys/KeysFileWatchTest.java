package dev.sluice.plugin.keys;

import com.fasterxml.jackson.databind.JsonNode;
import dev.sluice.api.admin.AdminRoutes.AdminRequest;
import dev.sluice.api.admin.AdminRoutes.AdminResponse;
import dev.sluice.api.binding.BindingConfig;
import dev.sluice.api.binding.BindingConfig.BindingKind;
import dev.sluice.api.binding.ProxyBinding;
import dev.sluice.support.json.Json;
import dev.sluice.api.testing.TestBindingContext;
import dev.sluice.api.testing.TestBindingContext.RecordedTask;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The keys file as an operator sees it, through the binding's own admin endpoints: the watch is one periodic task whose
 * check runs on the executor (never on the scheduler's thread), a changed file is loaded by the next check, a bad one
 * leaves the keys in force and says why, and closing the binding stops the watch. The scheduler and the executor are
 * the {@link TestBindingContext}'s, so every check runs when the test says and nothing here waits for a clock.
 */
class KeysFileWatchTest
{
    private static final String CONFIG_KEY = KeyTable.sha256Hex("sk-config");

    @TempDir
    Path dir;

    private final TestBindingContext context = new TestBindingContext("next");

    private ProxyBinding keys(Path file, String more)
    {
        JsonNode options;
        try
        {
            options = Json.MAPPER.readTree("{\"keys\": [ {\"id\": \"config-key\", \"sha256\": \"" + CONFIG_KEY + "\"} ],"
                + " \"file\": " + Json.MAPPER.writeValueAsString(file.toString()) + more + "}");
        }
        catch (Exception e)
        {
            throw new IllegalArgumentException(e);
        }
        return new KeysFactory().create(new BindingConfig("keys", "keys", BindingKind.PROXY, options, "next", List.of()),
            context);
    }

    private static void write(Path file, String yaml) throws Exception
    {
        // Beside, then moved into place: what an operator's tooling does, and a new identity the stamp notices.
        Path next = file.resolveSibling(file.getFileName() + ".next");
        Files.writeString(next, yaml);
        Files.move(next, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    }

    private static String entry(String id, String expires)
    {
        return "  - { id: " + id + ", sha256: \"" + KeyTable.sha256Hex("sk-" + id) + "\""
            + (expires == null ? "" : ", expires: \"" + expires + "\"") + " }\n";
    }

    private JsonNode listed() throws Exception
    {
        AdminResponse r = context.adminRoutes().get("GET /keys")
            .handle(new AdminRequest("GET", "/keys", null, null, new byte[0])).toCompletableFuture().join();
        assertThat(r.status()).isEqualTo(200);
        return Json.MAPPER.readTree(new String(r.body(), StandardCharsets.UTF_8));
    }

    private List<String> ids() throws Exception
    {
        List<String> ids = new ArrayList<>();
        listed().path("keys").forEach(k -> ids.add(k.path("id").asText()));
        return ids;
    }

    private RecordedTask watch()
    {
        assertThat(context.scheduledTasks()).hasSize(1);
        return context.scheduledTasks().get(0);
    }

    @Test
    void theWatchIsOnePeriodicTaskThatChecksOnTheExecutorAndLoadsAChangedFile() throws Exception
    {
        Path file = dir.resolve("keys.yaml");
        write(file, "keys:\n" + entry("one", null));
        keys(file, ", \"reload_interval\": \"2s\"");
        RecordedTask watch = watch();
        assertThat(watch.periodic()).isTrue();
        assertThat(watch.delay()).isEqualTo(Duration.ofSeconds(2));
        assertThat(ids()).containsExactly("config-key", "one");

        write(file, "keys:\n" + entry("one", null) + entry("two", null));
        watch.run();
        // The tick does no I/O itself: the file is read by the task it hands to the executor.
        assertThat(ids()).containsExactly("config-key", "one");
        assertThat(context.runSubmitted()).isEqualTo(1);
        assertThat(ids()).containsExactly("config-key", "one", "two");
        assertThat(listed().path("file").path("error").isNull()).isTrue();
    }

    @Test
    void aCheckStillQueuedIsNotQueuedAgain() throws Exception
    {
        // A slow disk must not pile up checks: ticks while one waits for the executor add none.
        Path file = dir.resolve("keys.yaml");
        write(file, "keys:\n" + entry("one", null));
        keys(file, "");
        RecordedTask watch = watch();
        watch.run();
        watch.run();
        watch.run();
        assertThat(context.submitted()).hasSize(1);
        assertThat(context.runSubmitted()).isEqualTo(1);
        watch.run();
        assertThat(context.submitted()).as("the next tick after the check ran").hasSize(1);
    }

    @Test
    void aBadFileKeepsTheKeysInForceUntilItIsFixed() throws Exception
    {
        Path file = dir.resolve("keys.yaml");
        write(file, "keys:\n" + entry("one", null));
        keys(file, "");
        RecordedTask watch = watch();

        write(file, "keys:\n" + entry("two", null) + "  - { id: three, sha256: \"" + KeyTable.sha256Hex("sk-three")
            + "\", modles: [ \"gpt-*\" ] }\n");
        watch.run();
        context.runSubmitted();
        JsonNode refused = listed();
        assertThat(ids()).containsExactly("config-key", "one");
        assertThat(refused.path("file").path("error").asText()).isEqualTo(file + ": keys[1].modles: unknown key"
            + " (expected one of: expires, id, key, limits, metadata, models, sha256, team)");
        assertThat(refused.toString()).doesNotContain(KeyTable.sha256Hex("sk-three"));

        // Gone altogether: still the old keys, and the list says why.
        Files.delete(file);
        watch.run();
        context.runSubmitted();
        assertThat(ids()).containsExactly("config-key", "one");
        assertThat(listed().path("file").path("error").asText()).isEqualTo(file + ": no such file");

        // Fixed: loaded by the next check, and the error is cleared.
        write(file, "keys:\n" + entry("two", null));
        watch.run();
        context.runSubmitted();
        assertThat(ids()).containsExactly("config-key", "two");
        assertThat(listed().path("file").path("error").isNull()).isTrue();
    }

    @Test
    void postReloadReadsTheFileOnTheExecutorAndSaysWhatChanged() throws Exception
    {
        Path file = dir.resolve("keys.yaml");
        write(file, "keys:\n" + entry("one", null) + entry("two", null));
        keys(file, "");
        write(file, "keys:\n" + entry("two", "2030-01-01T00:00:00Z") + entry("three", null));

        CompletableFuture<AdminResponse> reload = context.adminRoutes().get("POST /keys/reload")
            .handle(new AdminRequest("POST", "/keys/reload", null, null, new byte[0])).toCompletableFuture();
        assertThat(reload).isNotDone();
        context.runSubmitted();
        AdminResponse r = reload.join();
        assertThat(r.status()).isEqualTo(200);
        JsonNode body = Json.MAPPER.readTree(new String(r.body(), StandardCharsets.UTF_8));
        assertThat(body.path("added").toString()).isEqualTo("[\"three\"]");
        assertThat(body.path("removed").toString()).isEqualTo("[\"one\"]");
        assertThat(body.path("modified").toString()).isEqualTo("[\"two\"]");
        assertThat(body.path("keys").asInt()).isEqualTo(3);
    }

    @Test
    void closingTheBindingStopsTheWatch() throws Exception
    {
        Path file = dir.resolve("keys.yaml");
        write(file, "keys:\n" + entry("one", null));
        ProxyBinding binding = keys(file, "");
        RecordedTask watch = watch();

        // A check queued before the close reads nothing when it runs after it.
        write(file, "keys:\n" + entry("two", null));
        watch.run();
        binding.close();
        assertThat(watch.cancelled()).isTrue();
        assertThat(context.runSubmitted()).isEqualTo(1);
        assertThat(ids()).containsExactly("config-key", "one");
        // A tick that was already due when the binding closed queues nothing.
        watch.run();
        assertThat(context.submitted()).isEmpty();
    }

    @Test
    void aKeyIsValidUntilItsExpiryAndExpiredFromIt() throws Exception
    {
        Path file = dir.resolve("keys.yaml");
        Instant now = Instant.now();
        write(file, "keys:\n" + entry("past", now.minusSeconds(1).toString()) + entry("future", now.plusSeconds(3600).toString())
            + entry("far", "+1000000000-01-01T00:00:00Z") + entry("never", null));
        keys(file, "");

        List<String> expired = new ArrayList<>();
        listed().path("keys").forEach(k ->
        {
            if (k.path("expired").asBoolean())
                expired.add(k.path("id").asText());
        });
        assertThat(expired).containsExactly("past");
        VirtualKey far = KeyTable.of(List.of(new VirtualKey(new KeyDefinition("far", KeyTable.sha256Hex("k"), null, null,
            "+1000000000-01-01T00:00:00Z", null, null, null), "config", "here"))).find("k");
        assertThat(far.expiresAtMillis).as("an instant past what epoch milliseconds hold never comes").isEqualTo(VirtualKey.NEVER);
    }

    @Test
    void aKeysModelGlobsAdmitExactlyWhatTheyMatch()
    {
        VirtualKey narrow = new VirtualKey(new KeyDefinition("narrow", KeyTable.sha256Hex("k"), null,
            List.of("gpt-4o", "claude-*", "gemini-?.5-pro"), null, null, null, null), "config", "here");
        assertThat(narrow.allows("gpt-4o")).isTrue();
        assertThat(narrow.allows("gpt-4o-mini")).as("an exact name is not a prefix").isFalse();
        assertThat(narrow.allows("claude-sonnet-4-5")).isTrue();
        assertThat(narrow.allows("claude")).isFalse();
        assertThat(narrow.allows("gemini-2.5-pro")).isTrue();
        assertThat(narrow.allows("gemini-2.5-flash")).isFalse();
        assertThat(narrow.allows("GPT-4O")).as("globs are case-sensitive, as the router's").isFalse();
        assertThat(narrow.allows(null)).as("a request without a model is not one the key may ask for").isFalse();

        VirtualKey any = new VirtualKey(new KeyDefinition("any", KeyTable.sha256Hex("k2"), null, null, null, null, null,
            null), "config", "here");
        assertThat(any.allows("anything-at-all")).isTrue();
        assertThat(any.allows(null)).as("no globs: every request").isTrue();
    }
}
