package dev.sluice.plugin.keys;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.sluice.api.ErrorKind;
import dev.sluice.api.GatewayException;
import dev.sluice.api.binding.ServerBinding.Operation;
import dev.sluice.api.admin.AdminRoutes.AdminRequest;
import dev.sluice.api.admin.AdminRoutes.AdminResponse;
import dev.sluice.api.binding.ProxyBinding;
import dev.sluice.api.exchange.Exchange;
import dev.sluice.api.exchange.Next;
import dev.sluice.api.exchange.Reply;
import dev.sluice.api.exchange.ResponseHeaders;
import dev.sluice.support.json.Json;
import dev.sluice.api.binding.BindingContext.Scheduler;
import dev.sluice.support.json.JsonStrings;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;

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
 * <p>Thread-safe. Reloads are serialised by this object's monitor; the request path never takes it.
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
    // A model name is client input echoed in the 403: cap it so a huge one cannot bloat the error.
    private static final int MAX_ECHOED_MODEL = 200;

    private final String name;
    private final List<VirtualKey> configKeys;
    private final KeysFile file;
    private final Executor executor;
    private final AtomicBoolean checkQueued = new AtomicBoolean();
    private volatile KeyTable table;
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
        KeyTable next;
        List<VirtualKey> fileKeys;
        try
        {
            fileKeys = file.read();
            List<VirtualKey> all = new ArrayList<>(configKeys.size() + fileKeys.size());
            all.addAll(configKeys);
            all.addAll(fileKeys);
            next = KeyTable.of(all);
        }
        catch (IllegalArgumentException e)
        {
            return refused(e.getMessage());
        }
        Map<String, KeyDefinition> before = byId(table.keys("file"));
        Map<String, KeyDefinition> after = byId(fileKeys);
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
        table = next;
        loadedAt = Instant.now();
        boolean changed = !added.isEmpty() || !removed.isEmpty() || !modified.isEmpty();
        if (changed || lastError != null)
            LOG.info("bindings.{}: keys file {} loaded: {} keys (added {}, removed {}, changed {})", name, file.path(),
                fileKeys.size(), added, removed, modified);
        lastError = null;
        return new Reload(true, changed, added, removed, modified, next.keys().size(), null);
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

    /** Stops watching the file; a check already running finishes and changes nothing that matters any more. */
    @Override
    public void close()
    {
        closed = true;
        if (watch != null)
            watch.cancel();
    }
}
