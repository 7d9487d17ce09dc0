package dev.sluice.plugin.keys;

import java.time.Duration;
import java.util.List;

/**
 * The options of a {@code keys} binding, bound strictly by {@link dev.sluice.support.config.Options#bind}:
 *
 * <pre>{@code
 * options:
 *   keys:                          # keys in the config (optional when there is a file)
 *     - { id: team-a-ci, sha256: "…", team: team-a, models: [ "gpt-*" ] }
 *   file: /etc/sluice/keys.yaml    # more keys, re-read when it changes (optional when there are keys)
 *   reload_interval: 5s            # how often the file's modification time and size are looked at
 *   admin_path: /keys              # GET /keys and POST /keys/reload on the admin listener
 *   store:                         # keys added and revoked at runtime, shared by every replica (optional)
 *     redis: { url: "${{env.REDIS_URL}}" }
 *     refresh: 1s
 * }</pre>
 *
 * @param keys           the keys written in the config, never {@code null} after construction (may be empty if a file
 *                       is set)
 * @param file           a YAML or JSON file of keys ({@code keys: [ … ]}, or the bare list; JSON when the name ends in
 *                       {@code .json}), relative to the working directory, or {@code null}
 * @param reloadInterval how often the file is checked for a change, at least 100ms; default 5s
 * @param adminPath      where the admin endpoints are served: {@code GET adminPath} lists the keys,
 *                       {@code POST adminPath/reload} re-reads the file; default {@code /keys}; two keys bindings need
 *                       different paths; with a {@code store}, {@code POST adminPath} adds a key and
 *                       {@code DELETE adminPath/ID} revokes one, on every replica
 * @param store          the Redis that replicas share keys added and revoked at runtime through, or {@code null} for
 *                       none (each gateway knows only the config's and the file's keys)
 */
public record KeysOptions(List<KeyDefinition> keys, String file, Duration reloadInterval, String adminPath,
                          KeysStoreOptions store)
{
    /** The default {@link #reloadInterval()}. */
    public static final Duration DEFAULT_RELOAD_INTERVAL = Duration.ofSeconds(5);

    /** Validates and fills the defaults. */
    public KeysOptions
    {
        keys = keys == null ? List.of() : List.copyOf(keys);
        if (file != null && file.isBlank())
            throw new IllegalArgumentException("file: must not be blank (expected: the path of a YAML or JSON keys file)");
        if (keys.isEmpty() && file == null && store == null)
            throw new IllegalArgumentException("keys: no keys and no file (expected: a list of keys, a file, or both; or a"
                + " store, for keys added at runtime)");
        if (reloadInterval == null)
            reloadInterval = DEFAULT_RELOAD_INTERVAL;
        else if (reloadInterval.toMillis() < 100)
            throw new IllegalArgumentException("reload_interval: value: " + reloadInterval.toMillis()
                + "ms (expected: at least 100ms)");
        if (adminPath == null)
            adminPath = "/keys";
        else if (!adminPath.startsWith("/") || adminPath.endsWith("/") || adminPath.indexOf('?') >= 0)
            throw new IllegalArgumentException("admin_path: value: \"" + adminPath
                + "\" (expected: a path starting with / and not ending with /, such as /keys)");
    }
}
