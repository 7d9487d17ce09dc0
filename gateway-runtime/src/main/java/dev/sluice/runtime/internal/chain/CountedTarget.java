package dev.sluice.runtime.internal.chain;

import dev.sluice.api.exchange.Next;
import dev.sluice.api.binding.BindingContext.Target;
import dev.sluice.api.exchange.Exchange;
import dev.sluice.api.exchange.Reply;

import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The {@link Target} of a binding: its stage, counted. One per binding name, created when a binding first asks,
 * so every router that sends to a binding sees the same in-flight count.
 */
final class CountedTarget implements Target
{
    private final String name;
    private final String dialect;
    private final Next next;
    private final AtomicInteger inFlight = new AtomicInteger();

    CountedTarget(String name, String dialect, Next next)
    {
        this.name = name;
        this.dialect = dialect;
        this.next = next;
    }

    @Override
    public String name()
    {
        return name;
    }

    @Override
    public String dialect()
    {
        return dialect;
    }

    @Override
    public int inFlight()
    {
        return inFlight.get();
    }

    @Override
    public CompletionStage<Reply> handle(Exchange exchange)
    {
        if (exchange instanceof DefaultExchange e)
        {
            AttemptRecord attempt = e.attemptToSend(name);
            inFlight.incrementAndGet();
            attempt.countedBy(this);
        }
        return next.handle(exchange);
    }

    /** An attempt it counted ended. */
    void ended()
    {
        inFlight.decrementAndGet();
    }
}
