package dev.sluice.api.testing;

import dev.sluice.api.ErrorKind;
import dev.sluice.api.Experimental;
import dev.sluice.api.GatewayException;
import dev.sluice.api.exchange.Exchange.Attempt;
import dev.sluice.api.exchange.Exchange.Stage;
import dev.sluice.api.model.Usage;

/**
 * An {@link Attempt} whose every answer a test sets, put on a {@link TestExchange} with
 * {@link TestExchange#attempts(Attempt...)} for listeners that read what a router did; shipped in {@code gateway-api}'s
 * test-jar next to {@link TestCompletion}.
 *
 * <p>Each getter returns its public field of the same name as it is. {@link #fail} and {@link #cancel} end a pending
 * attempt as the runtime's do (the first end wins) but abort nothing. Reading it allocates nothing, so it suits
 * allocation tests of listeners. Not thread-safe.
 *
 * <pre>{@code
 * TestAttempt first = TestAttempt.failed(1, "south_a", 500, ErrorKind.UPSTREAM_ERROR);
 * TestAttempt second = TestAttempt.answered(2, "south_b");
 * TestCompletion c = TestCompletion.served();
 * c.route = "south_b";
 * c.exchange = new TestExchange("gpt-4o").attempts(first, second);
 * listener.completed(c);
 * }</pre>
 */
@Experimental
public final class TestAttempt implements Attempt
{
    /** {@link #number()}; default 1. */
    public int number = 1;
    /** {@link #target()}; default {@code "south"}. */
    public String target = "south";
    /** {@link #targetModel()}; default {@code "gpt-4o"}. */
    public String targetModel = "gpt-4o";
    /** {@link #startEpochMillis()}; default when it was created. */
    public long startEpochMillis = System.currentTimeMillis();
    /** {@link #startNanos()}; default when it was created. */
    public long startNanos = System.nanoTime();
    /** {@link #endNanos()}; default 0, pending; 1 ms after {@link #startNanos} in {@link #answered} and {@link #failed}. */
    public long endNanos;
    /** {@link #result()}; default {@link Result#PENDING}. */
    public Result result = Result.PENDING;
    /** {@link #status()}; default 0, no response head. */
    public int status;
    /** {@link #errorKind()}; default {@code null}. */
    public ErrorKind errorKind;
    /** {@link #errorMessage()}; default {@code null}. */
    public String errorMessage;
    /** {@link #usage()}; default {@code null}. */
    public Usage usage;

    private final long[] nanos = new long[Stage.values().length];

    /**
     * @param number its place among the exchange's attempts, 1 for the first
     * @param target the binding it went to
     * @return an attempt that answered with a 200, 1 ms long
     */
    public static TestAttempt answered(int number, String target)
    {
        TestAttempt a = new TestAttempt();
        a.number = number;
        a.target = target;
        a.status = 200;
        a.result = Result.ANSWERED;
        a.endNanos = a.startNanos + 1_000_000;
        return a;
    }

    /**
     * @param number its place among the exchange's attempts, 1 for the first
     * @param target the binding it went to
     * @param status the upstream's status, 0 for none (a refused connection, a timeout)
     * @param kind   what went wrong
     * @return an attempt that failed, 1 ms long
     */
    public static TestAttempt failed(int number, String target, int status, ErrorKind kind)
    {
        TestAttempt a = new TestAttempt();
        a.number = number;
        a.target = target;
        a.status = status;
        a.errorKind = kind;
        a.errorMessage = "upstream failed";
        a.result = Result.FAILED;
        a.endNanos = a.startNanos + 1_000_000;
        return a;
    }

    /**
     * Sets what {@link #nanos(Stage)} returns for an upstream stage.
     *
     * @param stage    {@link Stage#UPSTREAM_SEND}, {@link Stage#UPSTREAM_HEADERS} or {@link Stage#UPSTREAM_END}
     * @param nanoTime a {@link System#nanoTime()} value, or 0 for a stage the attempt did not reach
     * @return this attempt
     * @throws IllegalArgumentException for any other stage: an attempt has only the upstream ones
     */
    public TestAttempt atNanos(Stage stage, long nanoTime)
    {
        if (stage != Stage.UPSTREAM_SEND && stage != Stage.UPSTREAM_HEADERS && stage != Stage.UPSTREAM_END)
            throw new IllegalArgumentException(stage + " is not an attempt's stage (expected: an upstream stage)");
        nanos[stage.ordinal()] = nanoTime;
        return this;
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
        return targetModel;
    }

    @Override
    public long startEpochMillis()
    {
        return startEpochMillis;
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
        return nanos[stage.ordinal()];
    }

    @Override
    public Result result()
    {
        return result;
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
        end(Result.FAILED, error.kind(), error.getMessage());
    }

    @Override
    public void cancel(Throwable cause)
    {
        end(Result.CANCELLED, null, "cancelled: " + (cause == null ? null : cause.getMessage()));
    }

    private void end(Result how, ErrorKind kind, String message)
    {
        if (result != Result.PENDING)
            return;
        result = how;
        errorKind = kind;
        errorMessage = message;
        endNanos = System.nanoTime();
    }
}
