package dev.sluice.api.binding;

import dev.sluice.api.exchange.Exchange;
import dev.sluice.api.exchange.Next;
import dev.sluice.api.exchange.Reply;

import java.util.concurrent.CompletionStage;

/**
 * A binding a router may send attempts to, with what a balancer needs to choose among several: its name, the dialect
 * its upstream speaks and how many attempts it has in flight. Obtained once, when the binding is created, from
 * {@link BindingContext#target(String)}; one per exit, shared by every binding that asks for it.
 *
 * <p>{@link #handle} is the exit's {@link Next}, counted: it sends the exchange as its current
 * {@linkplain dev.sluice.api.exchange.Exchange.Attempt attempt} (starting one if none is current or the current one was sent
 * already) and counts the attempt in flight until it ends — for a stream, until the stream ends or the attempt is
 * {@linkplain dev.sluice.api.exchange.Exchange.Attempt#fail failed} or cancelled.
 *
 * <p>Thread-safe; {@link #inFlight()} is a plain read of a counter.
 *
 * <pre>{@code
 * Target a = context.target("openai_a"), b = context.target("openai_b");
 * Target pick = a.inFlight() <= b.inFlight() ? a : b;
 * exchange.startAttempt(pick.name());
 * return pick.handle(exchange);
 * }</pre>
 *
 * @since 0.5.0
 */
public interface Target
{
    /** @return the binding's name (its key under {@code bindings}) */
    String name();

    /**
     * @return the dialect its upstream speaks ({@link ClientBinding#dialect()}), or {@code null} if it does not say or
     *         the target is a proxy binding
     */
    String dialect();

    /** @return attempts sent through this target that have not ended */
    int inFlight();

    /** Sends {@code exchange} to the target as its current attempt; see the class comment. Never blocks. */
    CompletionStage<Reply> handle(Exchange exchange);
}
