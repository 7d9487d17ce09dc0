package dev.sluice.api.exchange;

import java.util.Map;
import java.util.Objects;

/**
 * Who is calling: set on the exchange by an authentication binding (virtual keys, say) with
 * {@link Exchange#identity(Identity)}, read by every later binding (limits, routing by team), by the request log and
 * by metrics through {@link Completion#identity()}. It never holds the credential itself.
 *
 * <p>Metadata carries what other plugins read about the caller; each plugin documents the keys it reads. The built-in
 * ones: {@code plugins/keys} puts a key's own {@code metadata} there, plus its limits flattened as
 * {@code limit.rpm}, {@code limit.tpm}, {@code limit.max_concurrent} (positive integers as decimal strings),
 * {@code budget.amount} (a plain decimal string, no exponent, no trailing zeros, in the price table's currency) and
 * {@code budget.period} ({@code Nd} for N days, or {@code month}), each present only when the key sets it; those names
 * are reserved: a key's own metadata cannot use the {@code limit.} and {@code budget.} prefixes. {@code plugins/limits}
 * reads them as per-key overrides. An identity built by the keys plugin is created once per key when the keys are
 * loaded and shared by all of that key's exchanges: it is immutable.
 *
 * @param keyId    the id of the key the client used (safe to log; never the key), not {@code null}
 * @param team     the team or owner the key belongs to, or {@code null}
 * @param metadata further labels from the key's definition (cost centre, environment…) and the key's limits as above;
 *                 never {@code null}
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
