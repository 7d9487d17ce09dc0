package dev.sluice.runtime.internal.chain;

import dev.sluice.api.ErrorKind;
import dev.sluice.api.GatewayException;
import dev.sluice.api.exchange.Exchange.Attempt;
import dev.sluice.api.exchange.Exchange.Stage;
import dev.sluice.api.model.Usage;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.List;
import java.util.function.Consumer;

/**
 * The runtime's {@link Attempt}. Its end is decided once, by a compare-and-set on {@link #state}; what the end records
 * (time, kind, message) is written before that state is published, so a reader that sees the result sees them too.
 * Abort listeners registered while it is current are kept by its {@link DefaultExchange}, under that exchange's lock.
 */
final class AttemptRecord implements Attempt
{
    private static final Result[] RESULTS = Result.values();
    private static final int PENDING = Result.PENDING.ordinal();
    /** The state while an end is being recorded: still pending to readers, taken to other enders. */
    private static final int ENDING = -1;
    private static final VarHandle STATE;

    static
    {
        try
        {
            STATE = MethodHandles.lookup().findVarHandle(AttemptRecord.class, "state", int.class);
        }
        catch (ReflectiveOperationException e)
        {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final DefaultExchange exchange;
    private final int number;
    private final long startNanos = System.nanoTime();
    // A Result's ordinal, or ENDING; changed only by compare-and-set (STATE).
    private volatile int state = PENDING;
    private volatile String target;
    private volatile String targetModel;
    private volatile boolean sent;
    private volatile int status;
    private volatile Usage usage;
    private volatile long sendNanos;
    private volatile long headersNanos;
    private volatile long endUpstreamNanos;
    private volatile long endNanos;
    private volatile ErrorKind errorKind;
    private volatile String errorMessage;
    // Counted by a Target while in flight: decremented once, when the attempt ends. Null when not counted.
    private volatile CountedTarget counter;
    // Abort listeners registered while this attempt was current; guarded by the exchange's lock.
    List<Consumer<Throwable>> abortListeners;

    AttemptRecord(DefaultExchange exchange, int number, String target)
    {
        this.exchange = exchange;
        this.number = number;
        this.target = target;
    }

    @Override
    public int number()
    {
        return number;
    }

    @Override
    public String target()
    {
        return target;
    }

    @Override
    public String targetModel()
    {
        String model = targetModel;
        return model != null ? model : exchange.targetModel();
    }

    /** {@inheritDoc} Derived from the start's {@link System#nanoTime()}: no wall-clock read per attempt. */
    @Override
    public long startEpochMillis()
    {
        return System.currentTimeMillis() - (System.nanoTime() - startNanos) / 1_000_000;
    }

    @Override
    public long startNanos()
    {
        return startNanos;
    }

    @Override
    public long endNanos()
    {
        return endNanos;
    }

    @Override
    public long nanos(Stage stage)
    {
        return switch (stage)
        {
            case UPSTREAM_SEND -> sendNanos;
            case UPSTREAM_HEADERS -> headersNanos;
            case UPSTREAM_END -> endUpstreamNanos;
            default -> 0;
        };
    }

    @Override
    public Result result()
    {
        int s = state;
        return s == ENDING ? Result.PENDING : RESULTS[s];
    }

    @Override
    public int status()
    {
        return status;
    }

    @Override
    public ErrorKind errorKind()
    {
        return errorKind;
    }

    @Override
    public String errorMessage()
    {
        return errorMessage;
    }

    @Override
    public Usage usage()
    {
        return usage;
    }

    @Override
    public void fail(Throwable failure)
    {
        GatewayException error = GatewayException.of(failure);
        end(Result.FAILED, error.kind(), error.getMessage(), System.nanoTime());
    }

    @Override
    public void cancel(Throwable cause)
    {
        Throwable why = cause == null ? new IllegalStateException("attempt cancelled") : cause;
        List<Consumer<Throwable>> toRun = exchange.takeAbortListeners(this);
        // Nothing went wrong upstream: the attempt was given up (the result says so), so it has no error kind.
        if (!end(Result.CANCELLED, null, "cancelled: " + why.getMessage(), System.nanoTime()))
            return;
        if (toRun != null)
        {
            for (Consumer<Throwable> l : toRun)
                l.accept(why);
        }
    }

    /**
     * @param nanos when it ended ({@link System#nanoTime()})
     * @return whether this call ended the attempt (the first end wins)
     */
    boolean end(Result result, ErrorKind kind, String message, long nanos)
    {
        if (!STATE.compareAndSet(this, PENDING, ENDING))
            return false;
        endNanos = nanos;
        errorKind = kind;
        errorMessage = message;
        state = result.ordinal();
        if (result != Result.CANCELLED)
            exchange.takeAbortListeners(this);
        CountedTarget c = counter;
        if (c != null)
            c.ended();
        return true;
    }

    boolean pending()
    {
        int s = state;
        return s == PENDING || s == ENDING;
    }

    boolean sent()
    {
        return sent;
    }

    /** A client binding was entered for this attempt with the exchange's current target model. */
    void sent(String clientName, String model)
    {
        sent = true;
        targetModel = model;
        if (target == null)
            target = clientName;
    }

    void countedBy(CountedTarget target)
    {
        counter = target;
    }

    void status(int status)
    {
        this.status = status;
    }

    void usage(Usage usage)
    {
        this.usage = usage;
    }

    /** Records {@code stage} at {@code nanos} unless already recorded; only the upstream stages are kept. */
    void mark(Stage stage, long nanos)
    {
        switch (stage)
        {
            case UPSTREAM_SEND ->
            {
                if (sendNanos == 0)
                    sendNanos = nanos;
            }
            case UPSTREAM_HEADERS ->
            {
                if (headersNanos == 0)
                    headersNanos = nanos;
            }
            case UPSTREAM_END ->
            {
                if (endUpstreamNanos == 0)
                    endUpstreamNanos = nanos;
            }
            default ->
            {
                // Not an attempt's stage.
            }
        }
    }

    @Override
    public String toString()
    {
        return "Attempt[" + number + " " + target + " " + result() + "]";
    }
}
