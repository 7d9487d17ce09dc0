package dev.sluice.api.exchange;

import java.util.List;
import java.util.function.BiConsumer;

/**
 * Read-only HTTP headers with case-insensitive names. Implementations are views over the server's own header
 * storage: reading does not copy.
 *
 * <pre>{@code
 * String agent = exchange.headers().get("user-agent");            // null if absent
 * exchange.headers().forEach((name, value) -> { if (name.startsWith("x-")) ... });
 * }</pre>
 */
public interface Headers
{
    /** @return the first value of {@code name}, or {@code null} if absent */
    String get(String name);

    /** @return every value of {@code name} in order (empty if absent) */
    List<String> getAll(String name);

    /** Calls {@code action} with each name and value, in order. */
    void forEach(BiConsumer<String, String> action);
}
