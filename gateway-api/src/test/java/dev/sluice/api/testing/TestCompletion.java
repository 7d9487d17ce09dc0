package dev.sluice.api.testing;

import dev.sluice.api.ErrorKind;
import dev.sluice.api.Experimental;
import dev.sluice.api.exchange.Completion;
import dev.sluice.api.exchange.Completion.CompletionListener;
import dev.sluice.api.exchange.Exchange;
import dev.sluice.api.exchange.Exchange.Identity;
import dev.sluice.api.exchange.Exchange.Stage;
import dev.sluice.api.model.Usage;

/**
 * A {@link Completion} whose every answer a test sets, for feeding a {@link CompletionListener} directly; shipped in
 * {@code gateway-api}'s test-jar next to {@link TestExchange}.
 *
 * <p>Each getter returns its public field of the same name as it is; none is derived from another (a test that
 * changes {@link #model} sets {@link #targetModel} too if it matters). Stage times are {@link System#nanoTime()}
 * values, set in one of two ways: {@link #at(Stage, long)} in microseconds after arrival, or {@link #atNanos(Stage,
 * long)} as the value itself; 0 means the exchange did not reach the stage.
 *
 * <p>Two starting points:
 * <ul>
 *   <li>{@link #TestCompletion()}: a completed, non-streamed 200 for request {@code "r1"} at {@code POST
 *       /v1/chat/completions} on server {@code "north"} (dialect {@code "openai"}), that arrived ten seconds before
 *       the completion was made and reached no other stage; everything else null, false or 0. The runtime always
 *       sets {@link Stage#RESPONSE_END}: set it too unless the test is about its absence.</li>
 *   <li>{@link #served()}: the same, answered by route {@code "south"} for model {@code "gpt-4o"}, with every stage
 *       but {@link Stage#FIRST_EVENT} set.</li>
 * </ul>
 *
 * <p>Reading it allocates nothing, so it suits allocation tests of listeners. Not thread-safe.
 *
 * <pre>{@code
 * TestCompletion c = TestCompletion.served();
 * c.stream = true;
 * c.events = 11;
 * c.at(Stage.FIRST_EVENT, 1_030);                     // 1.03 ms after arrival
 * listener.completed(c);
 *
 * TestCompletion refused = new TestCompletion();
 * refused.status = 401;
 * refused.errorKind = ErrorKind.AUTHENTICATION;
 * refused.at(Stage.RESPONSE_END, 40);
 * listener.completed(refused);
 * }</pre>
 */
@Experimental
public final class TestCompletion implements Completion
{
    /** {@link #id()}; default {@code "r1"}. */
    public String id = "r1";
    /** {@link #server()}; default {@code "north"}; {@code null} for a request no endpoint took. */
    public String server = "north";
    /** {@link #dialect()}; default {@code "openai"}; {@code null} for a request no endpoint took. */
    public String dialect = "openai";
    /** {@link #method()}; default {@code "POST"}. */
    public String method = "POST";
    /** {@link #path()}; default {@code "/v1/chat/completions"}. */
    public String path = "/v1/chat/completions";
    /** {@link #exchange()}; default {@code null}, a request refused before an exchange existed. */
    public Exchange exchange;
    /** {@link #outcome()}; default {@link Outcome#COMPLETED}. */
    public Outcome outcome = Outcome.COMPLETED;
    /** {@link #status()}; default 200. */
    public int status = 200;
    /** {@link #errorKind()}; default {@code null}, a success. */
    public ErrorKind errorKind;
    /** {@link #errorMessage()}; default {@code null}, and not derived from {@link #errorKind}. */
    public String errorMessage;
    /** {@link #model()}; default {@code null}, {@code "gpt-4o"} in {@link #served()}. */
    public String model;
    /**
     * {@link #targetModel()}; default {@code null}, {@code "gpt-4o"} in {@link #served()}; not derived from
     * {@link #model}.
     */
    public String targetModel;
    /** {@link #stream()}; default {@code false}. */
    public boolean stream;
    /** {@link #identity()}; default {@code null}. */
    public Identity identity;
    /** {@link #usage()}; default {@code null}. */
    public Usage usage;
    /** {@link #requestBytes()}; default 0, 100 in {@link #served()}. */
    public long requestBytes;
    /** {@link #responseBytes()}; default 0, 200 in {@link #served()}. */
    public long responseBytes;
    /** {@link #route()}; default {@code null}, {@code "south"} in {@link #served()}. */
    public String route;
    /** {@link #upstreamDialect()}; default {@code null}. */
    public String upstreamDialect;
    /** {@link #events()}; default 0. */
    public int events;
    /** {@link #maxEventGapNanos()}; default 0. */
    public long maxEventGapNanos;

    private final long[] nanos = new long[Stage.values().length];

    /**
     * A completed, non-streamed 200 from server {@code "north"} that arrived ten seconds ago (so a wall-clock time
     * derived from it is in the past) and reached no other stage; see the class comment for every default.
     */
    public TestCompletion()
    {
        nanos[Stage.ARRIVAL.ordinal()] = System.nanoTime() - 10_000_000_000L;
    }

    /**
     * A completed, non-streamed 200 from server {@code "north"}, answered by route {@code "south"} for model
     * {@code "gpt-4o"} ({@link #model} and {@link #targetModel}), 100 request bytes and 200 response bytes. Its stages,
     * in microseconds after arrival: {@link Stage#BODY_READ} 1, {@link Stage#CHAIN_START} 2, {@link
     * Stage#UPSTREAM_SEND} 10, {@link Stage#UPSTREAM_HEADERS} 1,010, {@link Stage#UPSTREAM_END} 2,010, {@link
     * Stage#RESPONSE_START} 2,020, {@link Stage#RESPONSE_END} 2,030; no {@link Stage#FIRST_EVENT}. So 2.03 ms in all,
     * the provider's first byte 1 ms after the send, the provider 2 ms from send to end and the gateway 30 µs.
     *
     * @return a new completion
     */
    public static TestCompletion served()
    {
        TestCompletion c = new TestCompletion();
        c.route = "south";
        c.model = "gpt-4o";
        c.targetModel = "gpt-4o";
        c.requestBytes = 100;
        c.responseBytes = 200;
        return c.at(Stage.BODY_READ, 1)
            .at(Stage.CHAIN_START, 2)
            .at(Stage.UPSTREAM_SEND, 10)
            .at(Stage.UPSTREAM_HEADERS, 1_010)
            .at(Stage.UPSTREAM_END, 2_010)
            .at(Stage.RESPONSE_START, 2_020)
            .at(Stage.RESPONSE_END, 2_030);
    }

    /**
     * Marks {@code stage} at {@code microsAfterArrival} microseconds after {@link Stage#ARRIVAL} (as it is now: a
     * later {@link #atNanos(Stage, long)} of the arrival does not move the stages set before it).
     *
     * @param stage              any stage but {@link Stage#ARRIVAL}
     * @param microsAfterArrival the time since arrival, in microseconds
     * @return this completion
     * @throws IllegalArgumentException for {@link Stage#ARRIVAL}: set it with {@link #atNanos(Stage, long)}
     */
    public TestCompletion at(Stage stage, long microsAfterArrival)
    {
        if (stage == Stage.ARRIVAL)
            throw new IllegalArgumentException("ARRIVAL is not after itself: use atNanos(Stage.ARRIVAL, nanoTime)");
        nanos[stage.ordinal()] = nanos[Stage.ARRIVAL.ordinal()] + microsAfterArrival * 1_000;
        return this;
    }

    /**
     * Sets what {@link #nanos(Stage)} returns for {@code stage}.
     *
     * @param stage    any stage
     * @param nanoTime a {@link System#nanoTime()} value, or 0 for a stage the exchange did not reach
     * @return this completion
     */
    public TestCompletion atNanos(Stage stage, long nanoTime)
    {
        nanos[stage.ordinal()] = nanoTime;
        return this;
    }

    /**
     * Makes it an exchange the chain answered without a provider (a refusal, a cache hit): clears {@link #route} and
     * the stages {@link Stage#UPSTREAM_SEND}, {@link Stage#UPSTREAM_HEADERS} and {@link Stage#UPSTREAM_END}.
     *
     * @return this completion
     */
    public TestCompletion noUpstream()
    {
        route = null;
        return atNanos(Stage.UPSTREAM_SEND, 0).atNanos(Stage.UPSTREAM_HEADERS, 0).atNanos(Stage.UPSTREAM_END, 0);
    }

    @Override
    public String id()
    {
        return id;
    }

    @Override
    public String server()
    {
        return server;
    }

    @Override
    public String dialect()
    {
        return dialect;
    }

    @Override
    public String method()
    {
        return method;
    }

    @Override
    public String path()
    {
        return path;
    }

    @Override
    public Exchange exchange()
    {
        return exchange;
    }

    @Override
    public Outcome outcome()
    {
        return outcome;
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
    public String model()
    {
        return model;
    }

    @Override
    public String targetModel()
    {
        return targetModel;
    }

    @Override
    public boolean stream()
    {
        return stream;
    }

    @Override
    public Identity identity()
    {
        return identity;
    }

    @Override
    public Usage usage()
    {
        return usage;
    }

    @Override
    public long nanos(Stage stage)
    {
        return nanos[stage.ordinal()];
    }

    @Override
    public long requestBytes()
    {
        return requestBytes;
    }

    @Override
    public long responseBytes()
    {
        return responseBytes;
    }

    @Override
    public String route()
    {
        return route;
    }

    @Override
    public String upstreamDialect()
    {
        return upstreamDialect;
    }

    @Override
    public int events()
    {
        return events;
    }

    @Override
    public long maxEventGapNanos()
    {
        return maxEventGapNanos;
    }
}
