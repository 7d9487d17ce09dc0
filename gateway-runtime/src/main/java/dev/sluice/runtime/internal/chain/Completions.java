package dev.sluice.runtime.internal.chain;

import dev.sluice.api.exchange.Completion;
import dev.sluice.api.exchange.Completion.CompletionListener;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Calls completion listeners so that one that throws affects neither the exchange nor the others. */
public final class Completions
{
    private static final Logger LOG = LoggerFactory.getLogger(Completions.class);

    private Completions()
    {
    }

    /** Calls {@code listener}, logging what it throws. */
    public static void call(CompletionListener listener, Completion completion)
    {
        try
        {
            listener.completed(completion);
        }
        catch (Throwable t)
        {
            LOG.error("request {}: a completion listener failed ({})", completion.id(), listener.getClass().getName(), t);
        }
    }
}
