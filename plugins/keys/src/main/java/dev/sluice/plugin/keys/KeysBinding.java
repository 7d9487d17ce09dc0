package dev.sluice.plugin.keys;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.sluice.api.ErrorKind;
import dev.sluice.api.GatewayException;
import dev.sluice.api.admin.AdminRoutes.AdminRequest;
import dev.sluice.api.admin.AdminRoutes.AdminResponse;
import dev.sluice.api.binding.BindingContext.Scheduler;
import dev.sluice.api.binding.ProxyBinding;
import dev.sluice.api.binding.ServerBinding.Operation;
import dev.sluice.api.config.ConfigException;
import dev.sluice.api.exchange.Exchange;
import dev.sluice.api.exchange.Next;
import dev.sluice.api.exchange.Reply;
import dev.sluice.api.exchange.ResponseHeaders;
import dev.sluice.support.config.Options;
import dev.sluice.support.json.Json;
import dev.sluice.support.json.JsonStrings;
import dev.sluice.support.redis.SharedRedis;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;
import java.util.function.LongFunction;

/**
 * Admits an exchange only with a known, unexpired key that may ask for the exchange's model, and tells every later
 * binding who is calling with {@link Exchange#identity(dev.sluice.api.exchange.Exchange.Identity)}.
 *
 * <p>Per request: {@link Exchange#clientKey()} (read by the server binding where its dialect's SDKs put it), one
 * SHA-256 and one table probe ({@link KeyTable#find}), the expiry against the wall clock, the model against the key's
 * globs. Refusals, all without calling {@code next}: no key → 401 saying which header to send; an unknown or
 * expired key → 401; a model the key may not use → 403 naming the model and the key's id. A message never quotes
 * what the client sent as its key. Admitting allocates nothing: the identity is built when the keys are loaded.
 *
 * <p>Keys come from the config and, optionally, a file that a periodic check on the runtime's scheduler re-reads on the
 * runtime's executor when its size, modification time or identity changed (and {@code POST <admin_path>/reload} at
 * once). A file that cannot be read or is invalid leaves the keys in force as they were, and is logged once, naming the
 * file and the problem but no key. The table is swapped whole: a request sees the old keys or the new ones.
 *
 * <p>With a store ({@link #follow}), keys added and revoked at runtime on any replica come from Redis through an
 * {@link OverlayFollower}: the table in force is the config's and the file's keys, less the revoked ids, plus the keys
 * added (a key added that has the id or the key of a config or file key is left out, and logged). The request path
 * never calls Redis: it reads the table, which every reload and every overlay read rebuilds and swaps whole.
 *
 * <p>Thread-safe. Reloads and overlay changes are serialised by this object's monitor; the request path never takes it.
 */
final class KeysBinding implements ProxyBinding
{
    private static final Logger LOG = LoggerFactory.getLogger(KeysBinding.class);

    /** What every 401 carries (RFC 9110 requires the challenge; HTTP clients that follow it expect one). */
    static final ResponseHeaders CHALLENGE = ResponseHeaders.of("www-authenticate", "Bearer realm=\"sluice\"");
    private static final GatewayException UNKNOWN = new GatewayException(ErrorKind.AUTHENTICATION, 401,
        "invalid API key (expected: a key issued for this gateway)", null, "invalid_api_key", null, CHALLENGE);
    private static final Map<String, GatewayException> MISSING = Map.of(
        "openai", missing("send it as Authorization: Bearer <key>"),
        "anthropic", missing("send it as x-api-key: <key> (or Authorization: Bearer <key>)"),
        "gemini", missing("send it as x-goog-api-key: <key> (or the key query parameter)"));
    private static final GatewayException MISSING_OTHER =
        missing("send it where your SDK sends API keys: Authorization: Bearer, x-api-key, x-goog-api-key or ?key=");
    private static final GatewayException STORE_NOT_READ = new GatewayException(ErrorKind.UNAVAILABLE, 503,
        "the gateway has not read its keys store yet (on_unavailable: fail_closed); retry shortly", null, "keys_unavailable",
        null);
    // A model name is client input echoed in the 403: cap it so a huge one cannot bloat the error.
    private static final int MAX_ECHOED_MODEL = 200;

    private final String name;
    private final List<VirtualKey> configKeys;
    private final KeysFile file;
    private final Executor executor;
    private final AtomicBoolean checkQueued = new AtomicBoolean();
    private volatile KeyTable table;
    // Written under this object's monitor: the file's keys as last loaded, and the store's overlay in force.
    private List<VirtualKey> fileKeys;
    private volatile KeysOverlay overlay = KeysOverlay.NONE;
    private List<String> shadowed = List.of();
    // Set by follow(): the store, what reads it, and whether requests wait for its first read.
    private RedisKeysStore store;
    private OverlayFollower follower;
    private volatile boolean awaitingStore;
    private volatile boolean closed;
    private Scheduler.Task watch;
    // Written under this object's monitor: what the file looked like when last read, when it was last loaded, and why
    // it was last refused. The last two are volatile so that GET <admin_path> reads them without waiting for a reload.
    private KeysFile.Stamp stamp;
    private volatile Instant loadedAt;
    private volatile String lastError;

    /**
     * @param name       the binding's name, for logs
     * @param configKeys the keys written in the config
     * @param file       the keys file, or {@code null}
     * @param table      the keys in force at start (the config's, and the file's as read at start)
     * @param stamp      the file's stamp when it was read at start, or {@code null}
     * @param executor   where file reloads run
     */
    KeysBinding(String name, List<VirtualKey> configKeys, KeysFile file, KeyTable table, KeysFile.Stamp stamp,
                Executor executor)
    {
        this.name = name;
        this.configKeys = List.copyOf(configKeys);
        this.file = file;
        this.table = table;
        this.fileKeys = table.keys("file");
        this.stamp = stamp;
        this.loadedAt = file == null ? null : Instant.now();
        this.executor = executor;
    }

    private static GatewayException missing(String how)
    {
        return new GatewayException(ErrorKind.AUTHENTICATION, 401, "missing API key: " + how, null, "missing_api_key", null,
            CHALLENGE);
    }

    @Override
    public CompletionStage<Reply> handle(Exchange exchange, Next next)
    {
        // The gateway's own warm-up carries no key: it passes, with no identity, so that the bindings after this warm too.
        if (exchange.warmup())
            return next.handle(exchange);
        if (awaitingStore)
            return CompletableFuture.failedFuture(STORE_NOT_READ);
        String presented = exchange.clientKey();
        if (presented == null)
        {
            GatewayException missing = MISSING.get(exchange.dialect());
            return CompletableFuture.failedFuture(missing != null ? missing : MISSING_OTHER);
        }
        VirtualKey key = table.find(presented);
        if (key == null)
            return CompletableFuture.failedFuture(UNKNOWN);
        if (key.expiresAtMillis != VirtualKey.NEVER && System.currentTimeMillis() >= key.expiresAtMillis)
            return CompletableFuture.failedFuture(key.expired);
        String model = exchange.model();
        Operation operation = exchange.operation();
        // A listing names no model: it shows the ones the key may use (its identity carries them).
        if (operation != Operation.LIST_MODELS && !key.allows(model))
        {
            return CompletableFuture.failedFuture(operation == Operation.GET_MODEL
                ? new GatewayException(ErrorKind.NOT_FOUND, 404, "model " + JsonStrings.quote(shortened(model))
                    + " not found", "model", "model_not_found", null)
                : forbidden(key, model));
        }
        exchange.identity(key.identity);
        return next.handle(exchange);
    }

    private static String shortened(String model)
    {
        return model.length() > MAX_ECHOED_MODEL ? model.substring(0, MAX_ECHOED_MODEL) + "..." : model;
    }

    private static GatewayException forbidden(VirtualKey key, String model)
    {
        String shown = model == null ? "null" : JsonStrings.quote(shortened(model));
        return new GatewayException(ErrorKind.PERMISSION, 403, "model: " + shown + " is not allowed for API key "
            + key.id() + " (expected: one of " + String.join(", ", key.definition.models()) + ")", "model",
            "model_not_allowed", null);
    }

    /** Starts checking the file every {@code interval} (not in check mode, and only with a file). */
    void watch(Scheduler scheduler, Duration interval)
    {
        watch = scheduler.scheduleWithFixedDelay(this::tick, interval, interval);
    }

    /** On the scheduler thread: hand the file check to the executor, one at a time; no I/O here. */
    private void tick()
    {
        if (closed || !checkQueued.compareAndSet(false, true))
            return;
        try
        {
            executor.execute(() ->
            {
                try
                {
                    if (!closed)
                        reload(false);
                }
                catch (RuntimeException e)
                {
                    LOG.error("bindings.{}: checking the keys file {} failed", name, file, e);
                }
                finally
                {
                    checkQueued.set(false);
                }
            });
        }
        catch (RejectedExecutionException stopping)
        {
            checkQueued.set(false);
        }
    }

    /** The outcome of a reload, for the admin endpoint. */
    record Reload(boolean loaded, boolean changed, List<String> added, List<String> removed, List<String> modified,
                  int keys, String error)
    {
    }

    /**
     * Re-reads the file if it changed since it was last read, or in any case when {@code force}; swaps the new keys in
     * if the file is valid, else keeps the old ones and logs why (once per distinct problem). Blocking file I/O: runs on
     * the executor, never on a request path.
     *
     * @return what happened, or {@code null} if the file had not changed and {@code force} was false
     */
    synchronized Reload reload(boolean force)
    {
        KeysFile.Stamp now;
        try
        {
            now = file.stamp();
        }
        catch (IllegalArgumentException e)
        {
            stamp = null;
            return refused(e.getMessage());
        }
        if (!force && now.equals(stamp))
            return null;
        stamp = now;
        List<VirtualKey> read;
        try
        {
            read = file.read();
            // Checks the config's and the file's keys together: duplicates refuse the file.
            KeyTable.of(base(configKeys, read));
        }
        catch (IllegalArgumentException e)
        {
            return refused(e.getMessage());
        }
        Map<String, KeyDefinition> before = byId(fileKeys);
        Map<String, KeyDefinition> after = byId(read);
        List<String> added = new ArrayList<>();
        List<String> modified = new ArrayList<>();
        for (Map.Entry<String, KeyDefinition> e : after.entrySet())
        {
            KeyDefinition old = before.get(e.getKey());
            if (old == null)
                added.add(e.getKey());
            else if (!old.equals(e.getValue()))
                modified.add(e.getKey());
        }
        List<String> removed = new ArrayList<>();
        for (String id : before.keySet())
        {
            if (!after.containsKey(id))
                removed.add(id);
        }
        fileKeys = read;
        rebuild();
        loadedAt = Instant.now();
        boolean changed = !added.isEmpty() || !removed.isEmpty() || !modified.isEmpty();
        if (changed || lastError != null)
            LOG.info("bindings.{}: keys file {} loaded: {} keys (added {}, removed {}, changed {})", name, file.path(),
                read.size(), added, removed, modified);
        lastError = null;
        return new Reload(true, changed, added, removed, modified, table.keys().size(), null);
    }

    private static List<VirtualKey> base(List<VirtualKey> configKeys, List<VirtualKey> fileKeys)
    {
        List<VirtualKey> all = new ArrayList<>(configKeys.size() + fileKeys.size());
        all.addAll(configKeys);
        all.addAll(fileKeys);
        return all;
    }

    /**
     * Swaps in the table of the config's and the file's keys less the revoked ids, plus the keys added in the store that
     * clash with none of them. Under this object's monitor.
     */
    private void rebuild()
    {
        KeysOverlay o = overlay;
        List<VirtualKey> base = base(configKeys, fileKeys);
        Set<String> ids = new HashSet<>();
        Set<String> hashes = new HashSet<>();
        List<VirtualKey> all = new ArrayList<>(base.size() + o.added().size());
        for (VirtualKey key : base)
        {
            ids.add(key.id());
            hashes.add(key.definition.sha256());
            if (!o.revoked().containsKey(key.id()))
                all.add(key);
        }
        List<String> left = new ArrayList<>();
        for (VirtualKey key : o.added())
        {
            // The store's scripts keep its own keys unique; a clash is with this replica's config or file.
            if (o.revoked().containsKey(key.id()) || ids.contains(key.id()) || !hashes.add(key.definition.sha256()))
                left.add(key.id());
            else
                all.add(key);
        }
        if (!left.equals(shadowed) && !left.isEmpty())
            LOG.warn("bindings.{}: keys added in the store left out, as their id or key is the config's or the file's: {}",
                name, left);
        shadowed = List.copyOf(left);
        table = KeyTable.of(all);
    }

    /**
     * Follows the shared store: keys added and revoked on any replica apply here within {@code refresh}.
     *
     * @param failClosed whether requests are refused until the store was read once
     */
    void follow(RedisKeysStore store, Scheduler scheduler, Duration refresh, boolean failClosed)
    {
        this.store = store;
        this.awaitingStore = failClosed;
        this.follower = new OverlayFollower(name, store, () -> overlay, this::apply);
        follower.start(scheduler, refresh);
    }

    /** Puts a newly read overlay in force (on the runtime's executor) and logs what changed. */
    private synchronized void apply(KeysOverlay read)
    {
        if (closed)
            return;
        KeysOverlay before = overlay;
        overlay = read;
        rebuild();
        awaitingStore = false;
        List<String> added = new ArrayList<>();
        for (VirtualKey key : read.added())
        {
            if (!before.stored().containsKey(key.id()))
                added.add(key.id());
        }
        List<String> revoked = new ArrayList<>();
        for (String id : read.revoked().keySet())
        {
            if (!before.revoked().containsKey(id))
                revoked.add(id);
        }
        if (!added.isEmpty() || !revoked.isEmpty())
            LOG.info("bindings.{}: keys store version {}: {} keys added, {} revoked (newly added {}, newly revoked {})",
                name, read.version(), read.added().size(), read.revoked().size(), added, revoked);
        else if (!before.read())
            LOG.info("bindings.{}: keys store read at version {}: {} keys added, {} revoked", name, read.version(),
                read.added().size(), read.revoked().size());
        if (!read.invalid().isEmpty() && !read.invalid().equals(before.invalid()))
            LOG.warn("bindings.{}: keys in the store that are not valid keys, left out: {}", name, read.invalid());
    }

    private Reload refused(String problem)
    {
        if (!problem.equals(lastError))
            LOG.warn("bindings.{}: keys file refused, keeping the {} keys in force: {}", name, table.keys().size(), problem);
        lastError = problem;
        return new Reload(false, false, List.of(), List.of(), List.of(), table.keys().size(), problem);
    }

    private static Map<String, KeyDefinition> byId(List<VirtualKey> keys)
    {
        Map<String, KeyDefinition> out = new LinkedHashMap<>();
        for (VirtualKey key : keys)
            out.put(key.id(), key.definition);
        return out;
    }

    /** {@code GET <admin_path>}: the keys in force, never their hashes. */
    CompletionStage<AdminResponse> list(AdminRequest request)
    {
        ObjectNode root = Json.MAPPER.createObjectNode();
        root.put("binding", name);
        if (file != null)
        {
            ObjectNode f = root.putObject("file");
            f.put("path", file.path().toString());
            Instant loaded = loadedAt;
            f.put("loaded_at", loaded == null ? null : loaded.toString());
            f.put("error", lastError);
        }
        if (follower != null)
        {
            KeysOverlay o = overlay;
            ObjectNode st = root.putObject("store");
            st.put("redis", store.describe());
            st.put("version", o.read() ? o.version() : null);
            Instant read = follower.readAt();
            st.put("read_at", read == null ? null : read.toString());
            st.put("error", follower.lastError());
            ArrayNode revoked = st.putArray("revoked");
            o.revoked().forEach((id, at) -> revoked.addObject().put("id", id).put("at", at));
            shadowedIds().forEach(st.putArray("left_out")::add);
            o.invalid().forEach(st.putArray("invalid")::add);
        }
        long now = System.currentTimeMillis();
        ArrayNode keys = root.putArray("keys");
        for (VirtualKey key : table.keys())
        {
            KeyDefinition d = key.definition;
            ObjectNode k = keys.addObject();
            k.put("id", d.id());
            k.put("team", d.team());
            if (d.models() == null)
                k.putNull("models");
            else
                d.models().forEach(k.putArray("models")::add);
            k.put("expires", key.expiresAtMillis == VirtualKey.NEVER ? null : d.expiresAt().toString());
            k.put("expired", key.expiresAtMillis != VirtualKey.NEVER && now >= key.expiresAtMillis);
            k.put("source", key.source);
            ObjectNode metadata = k.putObject("metadata");
            d.metadata().forEach(metadata::put);
            ObjectNode limits = k.putObject("limits");
            if (d.limits() != null)
                d.limits().flatten().forEach(limits::put);
        }
        return CompletableFuture.completedFuture(AdminResponse.json(200, root.toString()));
    }

    /** {@code POST <admin_path>/reload}: re-reads the file now, on the executor, and says what changed or why not. */
    CompletionStage<AdminResponse> reloadNow(AdminRequest request)
    {
        if (file == null)
            return CompletableFuture.completedFuture(AdminResponse.json(409, "{\"reloaded\":false,\"error\":"
                + JsonStrings.quote("bindings." + name + " has no keys file (options.file)") + "}"));
        return CompletableFuture.supplyAsync(() -> reload(true), executor).thenApply(r ->
        {
            ObjectNode root = Json.MAPPER.createObjectNode();
            root.put("reloaded", r.loaded());
            root.put("file", file.path().toString());
            root.put("keys", r.keys());
            if (r.loaded())
            {
                root.put("changed", r.changed());
                r.added().forEach(root.putArray("added")::add);
                r.removed().forEach(root.putArray("removed")::add);
                r.modified().forEach(root.putArray("modified")::add);
            }
            else
                root.put("error", r.error());
            return AdminResponse.json(r.loaded() ? 200 : 422, root.toString());
        });
    }

    private synchronized List<String> shadowedIds()
    {
        return shadowed;
    }

    /**
     * {@code POST <admin_path>}: adds a key on every replica. The body is a key definition as in the keys file, with the
     * key itself ({@code "key"}, hashed here and never stored) or its {@code sha256}. 201 once written and read back
     * here; 400 for a bad definition, 409 when its id or key is taken (or the id revoked), 503 when the store is away.
     */
    CompletionStage<AdminResponse> add(AdminRequest request)
    {
        KeyDefinition definition;
        String json;
        try
        {
            JsonNode body = request.body().length == 0 ? null : Json.MAPPER.readTree(request.body());
            if (!(body instanceof ObjectNode fields))
                return refuse(400, "the body must be a JSON object: {\"id\": …, \"key\" or \"sha256\": …, \"team\", \"models\","
                    + " \"expires\", \"metadata\", \"limits\"}");
            JsonNode key = fields.remove("key");
            if (key != null)
            {
                if (fields.has("sha256"))
                    return refuse(400, "key, sha256: give one of them (expected: the key, or its SHA-256)");
                if (!key.isTextual() || key.textValue().isEmpty() || key.textValue().length() > KeyTable.MAX_KEY_CHARS)
                    return refuse(400, "key: must be a string of 1 to " + KeyTable.MAX_KEY_CHARS + " characters");
                fields.put("sha256", KeyTable.sha256Hex(key.textValue()));
            }
            definition = Options.bind(fields, KeyDefinition.class, "body");
            fields.put("sha256", definition.sha256());
            json = Json.MAPPER.writeValueAsString(fields);
        }
        catch (ConfigException e)
        {
            return refuse(400, e.getMessage());
        }
        catch (IOException e)
        {
            // Jackson's message quotes the text around the fault, which may be a key: give the place only.
            return refuse(400, "the body is not valid JSON");
        }
        if (overlay.revoked().containsKey(definition.id()))
            return refuse(409, "id: " + definition.id() + " was revoked (expected: a new id)");
        VirtualKey clash = localClash(definition);
        if (clash != null)
            return refuse(409, clash.id().equals(definition.id())
                ? "id: " + definition.id() + " is taken by a key of the " + clash.source + " (expected: a new id)"
                : "the key is the same as " + clash.source + " key " + clash.id() + " (expected: a new key)");
        String id = definition.id();
        return written(store.add(definition, json), change -> switch (change.conflict())
        {
            case "revoked" -> answer(409, "id: " + id + " was revoked (expected: a new id)");
            case "id" -> answer(409, "id: " + id + " is taken by a key in the store (expected: a new id)");
            default -> answer(409, "the key is the same as a key in the store (expected: a new key)");
        }, version -> Json.MAPPER.createObjectNode().put("added", id).put("version", version), 201);
    }

    /** @return a config or file key that has {@code definition}'s id or hash, revoked ones included, or {@code null} */
    private synchronized VirtualKey localClash(KeyDefinition definition)
    {
        for (VirtualKey key : base(configKeys, fileKeys))
        {
            if (key.id().equals(definition.id()) || key.definition.sha256().equals(definition.sha256()))
                return key;
        }
        return null;
    }

    /**
     * {@code DELETE <admin_path>/ID}: revokes the key ID on every replica, whether it was added at runtime or comes from
     * a config or a file. 200 once written and read back here ({@code "changed": false} when it was revoked already);
     * 404 for an id neither this replica nor the store knows; 503 when the store is away.
     */
    CompletionStage<AdminResponse> revoke(AdminRequest request, String adminPath)
    {
        String id = URLDecoder.decode(request.path().substring(adminPath.length() + 1), StandardCharsets.UTF_8);
        boolean known;
        synchronized (this)
        {
            known = base(configKeys, fileKeys).stream().anyMatch(k -> k.id().equals(id));
        }
        return written(store.revoke(id, Instant.now().toString(), known), change -> change.conflict().equals("revoked")
            ? AdminResponse.json(200, Json.MAPPER.createObjectNode().put("revoked", id).put("changed", false).toString())
            : answer(404, "no key with id " + JsonStrings.quote(shortened(id)) + " (expected: the id of a key"
                + " that GET " + adminPath + " lists)"),
            version -> Json.MAPPER.createObjectNode().put("revoked", id).put("changed", true).put("version", version), 200);
    }

    /**
     * Answers a change to the store: once written, after this replica read it back (so that {@code GET <admin_path>}
     * shows it at once); refused, with {@code refused}'s answer; 503 when the store did not answer.
     */
    private CompletionStage<AdminResponse> written(CompletionStage<RedisKeysStore.Change> change,
                                                   Function<RedisKeysStore.Change, AdminResponse> refused,
                                                   LongFunction<ObjectNode> done, int status)
    {
        return change.thenCompose(c ->
        {
            if (!c.written())
                return CompletableFuture.completedFuture(refused.apply(c));
            return follower.read().thenApply(ignored ->
                AdminResponse.json(status, done.apply(c.version()).put("keys", table.keys().size()).toString()));
        }).exceptionally(failure ->
        {
            Throwable cause = failure instanceof CompletionException && failure.getCause() != null ? failure.getCause()
                : failure;
            if (!(cause instanceof SharedRedis.Unavailable))
                throw failure instanceof CompletionException ce ? ce : new CompletionException(failure);
            return answer(503, "the keys store did not answer, nothing was changed: " + cause.getMessage());
        });
    }

    private static CompletionStage<AdminResponse> refuse(int status, String message)
    {
        return CompletableFuture.completedFuture(answer(status, message));
    }

    private static AdminResponse answer(int status, String message)
    {
        return AdminResponse.json(status, "{\"error\":" + JsonStrings.quote(message) + "}");
    }

    /**
     * Stops watching the file and following the store; a check or a read already running finishes and changes nothing
     * that matters any more.
     */
    @Override
    public void close()
    {
        closed = true;
        if (watch != null)
            watch.cancel();
        if (follower != null)
            follower.close();
        if (store != null)
            store.close();
    }
}
