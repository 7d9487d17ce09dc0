package dev.sluice.plugin.guard;

import dev.sluice.api.ErrorKind;
import dev.sluice.api.GatewayException;

import java.util.concurrent.atomic.LongAdder;

/**
 * One configured rule in one direction: what to look for (a built-in detector, or every regex of a deny list), what
 * to do on a hit, and the hit counter the stats endpoint reads.
 *
 * <p>Thread-safe: immutable apart from the {@link LongAdder}, which is lock-free.
 */
final class Rule
{
    /** What a hit does. */
    enum Action
    {
        /** Refuse the request or end the answer with {@link ErrorKind#GUARDRAIL_BLOCKED}. */
        BLOCK,
        /** Replace the match with {@code [REDACTED:<rule>]}. */
        REDACT;

        /** @return the action's config spelling */
        String configName()
        {
            return this == BLOCK ? "block" : "redact";
        }
    }

    private final String name;
    private final Direction direction;
    private final Detector[] detectors;
    private final Action action;
    private final String replacement;
    private final GatewayException blocked;
    private final LongAdder hits = new LongAdder();

    /**
     * @param name      the rule name as configured ({@code email}, or a deny list's name)
     * @param direction where the rule applies
     * @param detectors what it looks for: one built-in detector, or one per regex of a deny list
     * @param action    what a hit does
     */
    Rule(String name, Direction direction, Detector[] detectors, Action action)
    {
        this.name = name;
        this.direction = direction;
        this.detectors = detectors.clone();
        this.action = action;
        this.replacement = "[REDACTED:" + name + "]";
        // Built once: a refusal is the same every time, and GatewayException keeps no stack trace. The message names
        // the rule and never the matched text, so nothing of the content is reflected.
        this.blocked = new GatewayException(ErrorKind.GUARDRAIL_BLOCKED, 400, "content blocked by the guard: rule "
            + name + " matched in the " + direction.configName(), null, null, null);
    }

    /** @return the rule name */
    String name()
    {
        return name;
    }

    /** @return where the rule applies */
    Direction direction()
    {
        return direction;
    }

    /** @return the detectors, not to be modified */
    Detector[] detectors()
    {
        return detectors;
    }

    /** @return what a hit does */
    Action action()
    {
        return action;
    }

    /** @return what a redacted match becomes: {@code [REDACTED:<rule>]} */
    String replacement()
    {
        return replacement;
    }

    /** @return the refusal a block answers with */
    GatewayException blocked()
    {
        return blocked;
    }

    /** Counts {@code n} hits. */
    void hit(int n)
    {
        hits.add(n);
    }

    /** @return the hits counted so far */
    long hits()
    {
        return hits.sum();
    }

    /** Where a rule applies. */
    enum Direction
    {
        /** The client's request, before it goes on. */
        REQUEST,
        /** The answer, before it reaches the client. */
        RESPONSE;

        /** @return the config spelling */
        String configName()
        {
            return this == REQUEST ? "request" : "response";
        }
    }
}
