package dev.sluice.plugin.log;

import dev.sluice.api.ErrorKind;
import dev.sluice.api.exchange.Completion;
import dev.sluice.api.exchange.Exchange;
import dev.sluice.api.exchange.Identity;
import dev.sluice.api.exchange.Stage;
import dev.sluice.api.model.Usage;

import java.util.EnumMap;
import java.util.Map;

/** A {@link Completion} whose every answer a test sets; stages are given as offsets from arrival. */
final class TestCompletion implements Completion
{
    String id = "r1";
    String server = "north";
    String dialect = "openai";
    String method = "POST";
    String path = "/v1/chat/completions";
    Exchange exchange;
    Outcome outcome = Outcome.COMPLETED;
    int status = 200;
    ErrorKind errorKind;
    String errorMessage;
    String model;
    String targetModel;
    boolean stream;
    Identity identity;
    Usage usage;
    long requestBytes;
    long responseBytes;
    String route;
    String upstreamDialect;
    int events;
    long maxEventGapNanos;
    final long arrival = System.nanoTime() - 10_000_000_000L;
    private final Map<Stage, Long> stages = new EnumMap<>(Stage.class);

    TestCompletion()
    {
        stages.put(Stage.ARRIVAL, arrival);
    }

    /** Marks {@code stage} at {@code micros} after arrival. */
    TestCompletion at(Stage stage, long micros)
    {
        stages.put(stage, arrival + micros * 1_000);
        return this;
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
        return stages.getOrDefault(stage, 0L);
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
