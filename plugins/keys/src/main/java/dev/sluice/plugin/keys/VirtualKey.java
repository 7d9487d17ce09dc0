package dev.sluice.plugin.keys;

import dev.sluice.api.ErrorKind;
import dev.sluice.api.GatewayException;
import dev.sluice.api.exchange.Exchange.Identity;
import dev.sluice.support.config.ModelGlob;

import java.time.Instant;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * One loaded key, ready for the request path: its digest as bytes, its model globs compiled, its expiry as epoch
 * milliseconds, and the {@link Identity} and the "expired" refusal built once, so that admitting or refusing a request
 * with it allocates nothing. Immutable.
 */
final class VirtualKey
{
    /** {@link #expiresAtMillis} of a key that never expires. */
    static final long NEVER = Long.MAX_VALUE;

    final KeyDefinition definition;
    /** Where the key was defined: {@code config} or {@code file}. */
    final String source;
    /** Where the key was defined, for messages: the config path or the file and index. */
    final String where;
    final byte[] digest;
    final long expiresAtMillis;
    final Identity identity;
    final GatewayException expired;
    // null: every model
    private final ModelGlob[] models;

    /**
     * @param definition the validated definition
     * @param source     {@code config} or {@code file}
     * @param where      the definition's location, e.g. {@code bindings.keys.options.keys[2]} or {@code keys.yaml: keys[2]}
     */
    VirtualKey(KeyDefinition definition, String source, String where)
    {
        this.definition = definition;
        this.source = source;
        this.where = where;
        this.digest = HexFormat.of().parseHex(definition.sha256());
        Instant expires = definition.expiresAt();
        this.expiresAtMillis = expires == null ? NEVER : epochMillis(expires);
        this.expired = new GatewayException(ErrorKind.AUTHENTICATION, 401,
            "API key expired at " + expires + " (expected: a key that is still valid; ask for a new one)", null,
            "expired_api_key", null, KeysBinding.CHALLENGE);
        Map<String, String> metadata = new LinkedHashMap<>(definition.metadata());
        if (definition.limits() != null)
            metadata.putAll(definition.limits().flatten());
        this.identity = new Identity(definition.id(), definition.team(), metadata,
            definition.models() == null ? List.of() : definition.models());
        List<String> globs = definition.models();
        if (globs == null)
            this.models = null;
        else
        {
            this.models = new ModelGlob[globs.size()];
            for (int i = 0; i < globs.size(); i++)
                this.models[i] = ModelGlob.compile(globs.get(i));
        }
    }

    // Instants beyond what epoch milliseconds hold (year 292 million) saturate: far enough to mean never or always.
    private static long epochMillis(Instant instant)
    {
        try
        {
            return instant.toEpochMilli();
        }
        catch (ArithmeticException e)
        {
            return instant.isBefore(Instant.EPOCH) ? Long.MIN_VALUE : NEVER;
        }
    }

    /** @return the key's id */
    String id()
    {
        return definition.id();
    }

    /** @return whether the key may ask for {@code model}; allocates nothing */
    boolean allows(String model)
    {
        if (models == null)
            return true;
        if (model == null)
            return false;
        for (ModelGlob glob : models)
        {
            if (glob.matches(model))
                return true;
        }
        return false;
    }
}
