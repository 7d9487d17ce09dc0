package dev.sluice.examples.costbalancer;

/**
 * The {@code options} of a {@code cost-balancer} binding, and the two small records its routes are bound to. All are
 * bound by {@link dev.sluice.support.config.Options#bind}: keys are the snake_case names of the components, any other key
 * is a startup error naming its path, and an {@link IllegalArgumentException} from a compact constructor whose
 * message starts with the field name ({@code "cost: ..."}) becomes a config error at that field.
 *
 * <pre>{@code
 * options: { max_inflight: 64 }
 * }</pre>
 *
 * @param maxInflight a target with this many attempts in flight is skipped; {@code null} (absent) means 64
 */
public record CostBalancerOptions(Integer maxInflight)
{
    /** Validates and fills the default. */
    public CostBalancerOptions
    {
        if (maxInflight != null && maxInflight < 1)
            throw new IllegalArgumentException("max_inflight: value: " + maxInflight + " (expected: at least 1)");
        maxInflight = maxInflight == null ? 64 : maxInflight;
    }

    /**
     * One entry of a route's {@code when} list: {@code { model: "gpt-*" }}.
     *
     * @param model the model name or glob the exchange's model must match; required, not blank
     */
    public record Condition(String model)
    {
        /** Validates the model. */
        public Condition
        {
            if (model == null || model.isBlank())
                throw new IllegalArgumentException("model: " + (model == null ? "must be set" : "value: \"" + model + "\"")
                    + " (expected: a model name or a glob such as gpt-*)");
        }
    }

    /**
     * What a route's target carries besides its {@code exit}: {@code { exit: south_mini, cost: 0.15 }}.
     *
     * @param cost what a request costs at this target, in any unit as long as every target of the route uses the same
     *             one (dollars per million input tokens, say); required, a number of at least 0
     */
    public record TargetOptions(Double cost)
    {
        /** Validates the cost. */
        public TargetOptions
        {
            if (cost == null)
                throw new IllegalArgumentException("cost: must be set (expected: a number such as 0.15)");
            if (cost.isNaN() || cost.isInfinite() || cost < 0)
                throw new IllegalArgumentException("cost: value: " + cost + " (expected: a number of at least 0)");
        }
    }
}
