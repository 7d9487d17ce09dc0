package dev.sluice.api.exchange;

import java.util.Map;
import java.util.Objects;

/**
 * Who is calling: set on the exchange by an authentication binding (virtual keys, say) with
 * {@link Exchange#identity(Identity)}, read by every later binding (limits, routing by team), by the request log and
 * by metrics through {@link Completion#identity()}. It never holds the credential itself.
 *
 * @param keyId    the id of the key the client used (safe to log; never the key), not {@code null}
 * @param team     the team or owner the key belongs to, or {@code null}
 * <p>Metadata carries what other plugins read about the caller; each plugin documents the keys it reads. The built-in
 * ones: {@code plugins/keys} puts a key's own limits there and {@code plugins/limits} reads them as per-key
 * overrides: {@code limit.rpm}, {@code limit.tpm}, {@code limit.max_concurrent}, {@code budget.amount},
 * {@code budget.period} (decimal strings; a period as {@code 1d}, {@code 30d} or {@code month}).
 *
 * @param metadata further labels from the key's definition (cost centre, environment…); never {@code null}
 */
public record Identity(String keyId, String team, Map<String, String> metadata)
{
    public Identity
    {
        Objects.requireNonNull(keyId, "keyId");
        metadata = metadata == null ? Map.of() : Map.copyOf(metadata);
    }

    /** An identity with a key id and a team, no metadata. */
    public Identity(String keyId, String team)
    {
        this(keyId, team, Map.of());
    }
}
