package dev.sluice.plugin.router;

/**
 * The router's {@code options}, all optional; routes live under the binding's {@code routes} key.
 *
 * <pre>{@code
 * options:
 *   retry_budget: { ratio: 0.2, min_per_second: 5 }   # per target binding, over the last 10 s
 *   attempt_headers: true                             # x-sluice-attempts and x-sluice-target on every answer
 *   admin_path: /routes                               # GET on the admin listener: targets and their state
 * }</pre>
 *
 * @param retryBudget    how many retries a target's failures may cause; {@code null} for the default
 * @param attemptHeaders whether answers carry {@code x-sluice-attempts} (how many attempts were made) and
 *                       {@code x-sluice-target} (the binding that answered); {@code null} for false
 * @param adminPath      where the admin listener shows the routes' targets and their state, as JSON; default
 *                       {@code /routes}; the same in the Prometheus text format at this path + {@code /metrics}
 */
public record RouterOptions(RetryBudgetOptions retryBudget, Boolean attemptHeaders, String adminPath)
{
    /** Fills the defaults. */
    public RouterOptions
    {
        if (adminPath != null && !adminPath.startsWith("/"))
            throw new IllegalArgumentException("admin_path: value: \"" + adminPath + "\" (expected: a path such as /routes)");
        adminPath = adminPath == null ? "/routes" : adminPath;
        retryBudget = retryBudget == null ? new RetryBudgetOptions(null, null) : retryBudget;
        attemptHeaders = attemptHeaders != null && attemptHeaders;
    }

    /**
     * {@code retry_budget}: the retries that failures of one target may cause, per target binding and router, over a
     * sliding 10 s window: at most {@code ratio} × the requests sent to it first, plus {@code min_per_second} × 10.
     * A retry beyond it is not made: the client gets the failure, so an outage is never amplified.
     *
     * @param ratio        retries per request, 0..1; default 0.2
     * @param minPerSecond retries allowed per second whatever the traffic, so that a quiet route still fails over;
     *                     default 5
     */
    public record RetryBudgetOptions(Double ratio, Integer minPerSecond)
    {
        /** Validates and fills the defaults. */
        public RetryBudgetOptions
        {
            if (ratio != null && (ratio < 0 || ratio > 1 || ratio.isNaN()))
                throw new IllegalArgumentException("ratio: value: " + ratio + " (expected: 0 to 1)");
            if (minPerSecond != null && minPerSecond < 0)
                throw new IllegalArgumentException("min_per_second: value: " + minPerSecond + " (expected: >= 0)");
            ratio = ratio == null ? 0.2 : ratio;
            minPerSecond = minPerSecond == null ? 5 : minPerSecond;
        }
    }
}
