package dev.sluice.plugin.keys;

import dev.sluice.api.config.ConfigException;
import dev.sluice.support.config.Options;
import dev.sluice.support.json.Json;
import dev.sluice.support.redis.SharedRedis;
import io.lettuce.core.ScriptOutputType;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;

/**
 * The keys replicas share, in Redis: the keys added at runtime (their definitions with the SHA-256, never the key), the
 * ids revoked, and a version that every change increments. Each change is one script — checked, written, versioned and
 * announced on a channel atomically — so replicas never see half a change, and every read takes the three at once.
 *
 * <p>Keys, under the binding's prefix {@code P} (one hash tag, so that a Redis Cluster keeps them in one slot):
 * {@code P{keys}:added} (id → definition JSON), {@code P{keys}:hashes} (SHA-256 → id, for uniqueness),
 * {@code P{keys}:revoked} (id → when), {@code P{keys}:version}; changes are published on {@code P keys:changed}.
 *
 * <p>Every stage completes on the runtime's executor and fails with {@link SharedRedis.Unavailable} when Redis does not
 * answer in time (see {@link SharedRedis}). Thread-safe: it holds no state of its own.
 */
final class RedisKeysStore implements AutoCloseable
{
    private static final SharedRedis.Script READ = SharedRedis.Script.of("""
        local v = redis.call('GET', KEYS[3])
        return { v and tonumber(v) or -1, redis.call('HGETALL', KEYS[1]), redis.call('HGETALL', KEYS[2]) }
        """);
    private static final SharedRedis.Script ADD = SharedRedis.Script.of("""
        if redis.call('HEXISTS', KEYS[2], ARGV[1]) == 1 then return { 1, 'revoked' } end
        if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1 then return { 1, 'id' } end
        if redis.call('HEXISTS', KEYS[4], ARGV[2]) == 1 then return { 1, 'hash' } end
        redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
        redis.call('HSET', KEYS[4], ARGV[2], ARGV[1])
        local v = redis.call('INCR', KEYS[3])
        redis.call('PUBLISH', ARGV[4], v)
        return { 0, v }
        """);
    private static final SharedRedis.Script REVOKE = SharedRedis.Script.of("""
        if redis.call('HEXISTS', KEYS[2], ARGV[1]) == 1 then return { 1, 'revoked' } end
        local def = redis.call('HGET', KEYS[1], ARGV[1])
        if not def and ARGV[4] ~= '1' then return { 1, 'unknown' } end
        if def then
          redis.call('HDEL', KEYS[1], ARGV[1])
          local ok, parsed = pcall(cjson.decode, def)
          if ok and type(parsed) == 'table' and type(parsed['sha256']) == 'string' then
            redis.call('HDEL', KEYS[4], parsed['sha256'])
          end
        end
        redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
        local v = redis.call('INCR', KEYS[3])
        redis.call('PUBLISH', ARGV[3], v)
        return { 0, v }
        """);
    // Writes a replica's last overlay back into a store that lost its data: only while the version is missing, so the
    // first replica to notice restores it and the others read what it wrote.
    private static final SharedRedis.Script RESTORE = SharedRedis.Script.of("""
        if redis.call('EXISTS', KEYS[3]) == 1 then return 0 end
        local n = tonumber(ARGV[3])
        for i = 0, n - 1 do
          redis.call('HSET', KEYS[1], ARGV[4 + 3 * i], ARGV[5 + 3 * i])
          redis.call('HSET', KEYS[4], ARGV[6 + 3 * i], ARGV[4 + 3 * i])
        end
        for i = 4 + 3 * n, #ARGV, 2 do
          redis.call('HSET', KEYS[2], ARGV[i], ARGV[i + 1])
        end
        redis.call('SET', KEYS[3], ARGV[2])
        redis.call('PUBLISH', ARGV[1], ARGV[2])
        return 1
        """);

    private final SharedRedis redis;
    private final String[] keys;
    private final String channel;
    private final Executor executor;

    /**
     * @param redis    the binding's handle, closed with this store
     * @param executor the runtime's executor, where every stage of this store completes (overlays are parsed and
     *                 applied there, never on Redis' event loop)
     */
    RedisKeysStore(SharedRedis redis, Executor executor)
    {
        this.redis = redis;
        this.executor = executor;
        String p = redis.prefix() + "{keys}:";
        this.keys = new String[] {p + "added", p + "revoked", p + "version", p + "hashes"};
        this.channel = redis.prefix() + "keys:changed";
    }

    /** @return {@code stage}, whose dependents run on the runtime's executor */
    private <T> CompletionStage<T> onExecutor(CompletionStage<T> stage)
    {
        return stage.whenCompleteAsync((value, failure) -> { }, executor);
    }

    /** @return where the store is, without credentials */
    String describe()
    {
        return redis.describe();
    }

    /** @return the store's version, or -1 when it holds none (it is new, or lost its data) */
    CompletionStage<Long> version()
    {
        return onExecutor(redis.call(c -> c.get(keys[2]))).thenApply(v -> v == null ? -1L : Long.parseLong(utf8(v)));
    }

    /** @return the keys added and revoked, at one version */
    CompletionStage<KeysOverlay> read()
    {
        return onExecutor(redis.<List<Object>>eval(READ, ScriptOutputType.MULTI, keys)).thenApply(RedisKeysStore::overlay);
    }

    private static KeysOverlay overlay(List<Object> reply)
    {
        long version = (Long) reply.get(0);
        Map<String, VirtualKey> added = new TreeMap<>();
        Map<String, String> stored = new TreeMap<>();
        List<String> invalid = new ArrayList<>();
        List<?> fields = (List<?>) reply.get(1);
        for (int i = 0; i + 1 < fields.size(); i += 2)
        {
            String id = utf8((byte[]) fields.get(i));
            String json = utf8((byte[]) fields.get(i + 1));
            try
            {
                KeyDefinition definition = Options.bind(Json.MAPPER.readTree(json), KeyDefinition.class, "store." + id);
                if (!definition.id().equals(id))
                    throw new IllegalArgumentException("id differs from the field's");
                added.put(id, new VirtualKey(definition, "store", "the store's key " + id));
                stored.put(id, json);
            }
            catch (IOException | ConfigException | IllegalArgumentException e)
            {
                invalid.add(id);
            }
        }
        Map<String, String> revoked = new TreeMap<>();
        List<?> revocations = (List<?>) reply.get(2);
        for (int i = 0; i + 1 < revocations.size(); i += 2)
            revoked.put(utf8((byte[]) revocations.get(i)), utf8((byte[]) revocations.get(i + 1)));
        return new KeysOverlay(version, new ArrayList<>(added.values()), stored, revoked, invalid);
    }

    /** What a change did: written at {@code version}, or refused for {@code conflict}. */
    record Change(long version, String conflict)
    {
        boolean written()
        {
            return conflict == null;
        }
    }

    /**
     * Adds a key, unless its id is revoked or taken, or its hash taken, in the store.
     *
     * @param definition the key
     * @param json       its definition as stored: JSON with the hash, never the key
     * @return the change, refused with {@code revoked}, {@code id} or {@code hash}
     */
    CompletionStage<Change> add(KeyDefinition definition, String json)
    {
        return onExecutor(redis.<List<Object>>eval(ADD, ScriptOutputType.MULTI, keys, bytes(definition.id()),
            bytes(definition.sha256()), bytes(json), bytes(channel))).thenApply(RedisKeysStore::change);
    }

    /**
     * Revokes the key {@code id}: removes it from the keys added, and records the id so that a key of the config or the
     * file with that id is refused too.
     *
     * @param known whether this replica knows the id (from its config or file): else only a key added at runtime is
     *              revoked
     * @return the change, refused with {@code revoked} (already) or {@code unknown}
     */
    CompletionStage<Change> revoke(String id, String at, boolean known)
    {
        return onExecutor(redis.<List<Object>>eval(REVOKE, ScriptOutputType.MULTI, keys, bytes(id), bytes(at),
            bytes(channel), bytes(known ? "1" : "0"))).thenApply(RedisKeysStore::change);
    }

    private static Change change(List<Object> reply)
    {
        return ((Long) reply.get(0)) == 0 ? new Change((Long) reply.get(1), null)
            : new Change(-1, utf8((byte[]) reply.get(1)));
    }

    /**
     * Writes {@code overlay} into the store if it holds no version (it restarted without its data).
     *
     * @return whether it was written (another replica may have been first)
     */
    CompletionStage<Boolean> restore(KeysOverlay overlay)
    {
        List<byte[]> args = new ArrayList<>();
        args.add(bytes(channel));
        args.add(bytes(Long.toString(overlay.version())));
        args.add(bytes(Integer.toString(overlay.added().size())));
        for (VirtualKey key : overlay.added())
        {
            args.add(bytes(key.id()));
            args.add(bytes(overlay.stored().get(key.id())));
            args.add(bytes(key.definition.sha256()));
        }
        overlay.revoked().forEach((id, at) ->
        {
            args.add(bytes(id));
            args.add(bytes(at));
        });
        return onExecutor(redis.<Long>eval(RESTORE, ScriptOutputType.INTEGER, keys, args.toArray(new byte[0][])))
            .thenApply(written -> written == 1L);
    }

    /** Calls {@code changed} on the runtime's executor whenever a replica announces a change. */
    void onChange(Runnable changed)
    {
        redis.subscribe(channel, message -> changed.run());
    }

    private static byte[] bytes(String text)
    {
        return text.getBytes(StandardCharsets.UTF_8);
    }

    private static String utf8(byte[] bytes)
    {
        return new String(bytes, StandardCharsets.UTF_8);
    }

    @Override
    public void close()
    {
        redis.close();
    }
}
