package dev.sluice.plugin.router;

/**
 * A target's keys besides {@code exit}.
 *
 * @param weight   its share of its group's requests, 1..1000; default 1
 * @param priority its group: 0 (default) is tried first, then 1, and so on
 * @param with     rewrites for attempts at this target ({@code model}: the alias to ask for)
 */
public record TargetSettings(Integer weight, Integer priority, RouteRewrite with)
{
    /** Validates and fills the defaults. */
    public TargetSettings
    {
        if (weight != null && (weight < 1 || weight > 1000))
            throw new IllegalArgumentException("weight: value: " + weight + " (expected: 1..1000)");
        if (priority != null && (priority < 0 || priority > 100))
            throw new IllegalArgumentException("priority: value: " + priority + " (expected: 0..100)");
        weight = weight == null ? 1 : weight;
        priority = priority == null ? 0 : priority;
    }
}
