package dev.sluice.plugin.metrics;

import dev.sluice.api.ErrorKind;
import dev.sluice.api.exchange.Completion;
import dev.sluice.api.exchange.Exchange;
import dev.sluice.api.exchange.Identity;
import dev.sluice.api.exchange.Stage;
import dev.sluice.api.model.Usage;

/**
 * A {@link Completion} whose every answer a test sets, for feeding the listener directly (the runtime's own is tested
 * end to end in gateway-runtime's {@code MetricsPluginTest}). Defaults: a completed, non-streamed 200 from server
 * {@code north} served by route {@code south} for model {@code gpt-4o}, with every stage a millisecond apart.
 */
final class TestCompletion implements Completion
{
    String server = "north";
    String route = "south";
    String model = "gpt-4o";
    Outcome outcome = Outcome.COMPLETED;
    int status = 200;
    ErrorKind errorKind;
    Usage usage;
    Exchange exchange;
    boolean stream;
    int events;
    long maxEventGapNanos;
    final long[] nanos = new long[Stage.values().length];

    TestCompletion()
    {
        long t = 1_000_000_000L;
        at(Stage.ARRIVAL, t);
        at(Stage.BODY_READ, t + 1_000);
        at(Stage.CHAIN_START, t + 2_000);
        at(Stage.UPSTREAM_SEND, t + 10_000);
        at(Stage.UPSTREAM_HEADERS, t + 1_010_000);
        at(Stage.UPSTREAM_END, t + 2_010_000);
        at(Stage.RESPONSE_START, t + 2_020_000);
        at(Stage.RESPONSE_END, t + 2_030_000);
    }

    TestCompletion at(Stage stage, long value)
    {
        nanos[stage.ordinal()] = value;
        return this;
    }

    /** Clears the upstream stages: an exchange the chain answered without a provider. */
    TestCompletion noUpstream()
    {
        route = null;
        return at(Stage.UPSTREAM_SEND, 0).at(Stage.UPSTREAM_HEADERS, 0).at(Stage.UPSTREAM_END, 0);
    }

    @Override
    public String id()
    {
        return "test";
    }

    @Override
    public String server()
    {
        return server;
    }

    @Override
    public String dialect()
    {
        return server == null ? null : "openai";
    }

    @Override
    public String method()
    {
        return "POST";
    }

    @Override
    public String path()
    {
        return "/v1/chat/completions";
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
        return errorKind == null ? null : "failed";
    }

    @Override
    public String model()
    {
        return model;
    }

    @Override
    public String targetModel()
    {
        return model;
    }

    @Override
    public boolean stream()
    {
        return stream;
    }

    @Override
    public Identity identity()
    {
        return null;
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
        return 100;
    }

    @Override
    public long responseBytes()
    {
        return 200;
    }

    @Override
    public String route()
    {
        return route;
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
