package dev.sluice.plugin.keys;

import java.time.DateTimeException;
import java.time.Instant;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * One virtual key as written in the config's {@code keys} list or in the keys file:
 *
 * <pre>{@code
 * - id: team-a-ci
 *   sha256: "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
 *   team: team-a
 *   models: [ "gpt-4o*", "claude-*" ]
 *   expires: 2027-01-31T00:00:00Z
 *   metadata: { cost_centre: "4711" }
 *   limits: { rpm: 600, tpm: 200000, max_concurrent: 8, budget: 250, budget_period: month }
 * }</pre>
 *
 * <p>The key itself is never stored: only the SHA-256 of its UTF-8 bytes, in hex. A {@code key} field holding the
 * plaintext is refused (with a message pointing at {@code sluice keys new}); no message ever quotes a key or a hash.
 *
 * @param id       the key's name, safe to log and shown to later bindings as {@code Identity.keyId()}:
 *                 1 to 128 characters of letters, digits and {@code . _ - : @ /}, starting with a letter or digit;
 *                 required, unique within a binding
 * @param sha256   the SHA-256 of the key, 64 hex digits (either case; kept in lower case); required, unique
 * @param team     the team or owner, or {@code null}
 * @param models   globs of the models the key may ask for ({@code *} any run, {@code ?} one character), or
 *                 {@code null} for every model; not empty
 * @param expires  when the key stops working, an ISO-8601 instant ({@code 2027-01-31T00:00:00Z}, an offset allowed),
 *                 or {@code null} for never
 * @param metadata further labels put on the identity; names starting with {@code limit.} or {@code budget.} are
 *                 reserved for {@code limits}; never {@code null} after construction
 * @param limits   the key's own limits, or {@code null}
 * @param key      never accepted: present only so that a plaintext key gets a useful error instead of "unknown key"
 */
public record KeyDefinition(String id, String sha256, String team, List<String> models, String expires,
                            Map<String, String> metadata, KeyLimits limits, String key)
{
    private static final Pattern ID = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._:@/-]{0,127}");
    private static final Pattern HEX64 = Pattern.compile("[0-9a-fA-F]{64}");

    /** Validates every field, normalises the hash to lower case and copies the collections. */
    public KeyDefinition
    {
        if (key != null)
            throw new IllegalArgumentException("key: plaintext keys are not accepted (expected: sha256, the SHA-256 of the key;"
                + " `sluice keys new` makes a key and prints the line to use, `sluice keys hash` hashes an existing one)");
        if (id == null)
            throw new IllegalArgumentException("id: must be set (expected: a name for the key, such as team-a-ci)");
        if (!ID.matcher(id).matches())
            throw new IllegalArgumentException("id: value: \"" + (id.length() > 40 ? id.substring(0, 40) + "..." : id)
                + "\" (expected: 1 to 128 letters, digits or . _ - : @ /, starting with a letter or digit)");
        // Never quote the value: a hash is as private as the key's id is public.
        if (sha256 == null)
            throw new IllegalArgumentException("sha256: must be set (expected: the SHA-256 of the key in hex;"
                + " `sluice keys new` prints it)");
        if (!HEX64.matcher(sha256).matches())
            throw new IllegalArgumentException("sha256: is not 64 hexadecimal digits (expected: the SHA-256 of the key in hex;"
                + " `sluice keys hash` prints it)");
        sha256 = sha256.toLowerCase(Locale.ROOT);
        if (team != null && team.isBlank())
            throw new IllegalArgumentException("team: must not be blank (expected: a team name, or no team key)");
        if (models != null)
        {
            if (models.isEmpty())
                throw new IllegalArgumentException("models: value: [] (expected: at least one model glob; leave models out to"
                    + " allow every model)");
            for (int i = 0; i < models.size(); i++)
            {
                String glob = models.get(i);
                if (glob == null || glob.isBlank())
                    throw new IllegalArgumentException("models[" + i + "]: must not be blank (expected: a model name or a glob"
                        + " such as gpt-4o*)");
            }
            models = List.copyOf(models);
        }
        if (expires != null)
            parseInstant(expires);
        if (metadata == null)
            metadata = Map.of();
        else
        {
            for (Map.Entry<String, String> e : metadata.entrySet())
            {
                if (e.getKey().isBlank() || e.getKey().startsWith("limit.") || e.getKey().startsWith("budget."))
                    throw new IllegalArgumentException("metadata." + e.getKey() + ": reserved or blank name (expected: a name"
                        + " not starting with limit. or budget.; put limits under limits)");
                if (e.getValue() == null)
                    throw new IllegalArgumentException("metadata." + e.getKey() + ": must not be null (expected: a string)");
            }
            metadata = Map.copyOf(metadata);
        }
    }

    /** @return when the key expires, or {@code null} for never */
    public Instant expiresAt()
    {
        return expires == null ? null : parseInstant(expires);
    }

    private static Instant parseInstant(String text)
    {
        try
        {
            return Instant.parse(text.strip());
        }
        catch (DateTimeException e)
        {
            throw new IllegalArgumentException("expires: value: \"" + (text.length() > 40 ? text.substring(0, 40) + "..." : text)
                + "\" (expected: an ISO-8601 instant such as 2027-01-31T00:00:00Z)");
        }
    }
}
