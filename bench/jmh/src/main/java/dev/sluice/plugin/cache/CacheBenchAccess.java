package dev.sluice.plugin.cache;

import dev.sluice.api.model.ChatRequest;

import java.util.List;

/**
 * Opens the cache plugin's package-private key computation to the JMH benchmarks, so that they measure the code a
 * cache miss and a hit run rather than a copy of it. It lives in the plugin's package but in the bench module, which
 * is never shipped (see the openai plugin's {@code BenchAccess} for why the split package is harmless here).
 */
public final class CacheBenchAccess
{
    private static final CacheKeys KEYS = new CacheKeys(List.of());

    private CacheBenchAccess()
    {
    }

    /** @return the key {@code CacheBinding} computes for {@code request}, as an opaque object (equal requests, equal keys) */
    public static Object key(String tenant, String targetModel, ChatRequest request)
    {
        return KEYS.key(tenant, targetModel, request);
    }
}
