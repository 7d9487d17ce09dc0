package dev.sluice.api.testing;

import dev.sluice.api.Experimental;
import dev.sluice.api.binding.BindingContext;
import dev.sluice.api.codec.JsonStrings;
import dev.sluice.api.config.ConfigException;
import dev.sluice.api.exchange.Exchange;
import dev.sluice.api.exchange.Next;
import dev.sluice.api.exchange.Reply;
import dev.sluice.api.upstream.Upstream;
import dev.sluice.api.upstream.UpstreamOptions;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * A {@link BindingContext} for unit tests of binding factories, shipped in {@code gateway-api}'s test-jar next to
 * {@link TestExchange}.
 *
 * <p>It has the exits named when it was made, each a {@link RecordingNext} that records the exchanges it gets and
 * answers {@code 200 text/plain} with its own name, so a test can tell which exit a binding chose. Asking for any
 * other exit throws {@link ConfigException}, as the runtime does. {@link #upstream(UpstreamOptions)} fails the test:
 * bindings that need an upstream are tested end to end. {@link #env(String)} answers what {@link #env(String,
 * String)} set, and {@code null} otherwise. Not thread-safe; build it before the test runs the binding.
 *
 * <pre>{@code
 * TestBindingContext context = new TestBindingContext("south_openai", "south_anthropic");
 * ProxyBinding router = new RouterFactory().create(config, context);
 * router.handle(new TestExchange("gpt-4o"), next);
 * assertThat(context.recorder("south_openai").received()).hasSize(1);
 * }</pre>
 */
@Experimental
public final class TestBindingContext implements BindingContext
{
    private final Map<String, RecordingNext> exits = new LinkedHashMap<>();
    private final Map<String, String> env = new HashMap<>();

    /** @param exitNames the exits a binding may ask for; none for a binding that has no exit */
    public TestBindingContext(String... exitNames)
    {
        for (String name : exitNames)
            exits.put(name, new RecordingNext(name));
    }

    /**
     * Sets an environment variable for {@link #env(String)}.
     *
     * @return this context
     */
    public TestBindingContext env(String name, String value)
    {
        env.put(Objects.requireNonNull(name, "name"), Objects.requireNonNull(value, "value"));
        return this;
    }

    /**
     * @return the exit named {@code name}
     * @throws IllegalArgumentException if this context was not made with that exit
     */
    public RecordingNext recorder(String name)
    {
        RecordingNext next = exits.get(name);
        if (next == null)
            throw new IllegalArgumentException("no exit named " + name + " (expected one of: " + exits.keySet() + ")");
        return next;
    }

    /** @return the total number of exchanges all exits received */
    public int calls()
    {
        return exits.values().stream().mapToInt(next -> next.received.size()).sum();
    }

    @Override
    public Next exit(String bindingName)
    {
        RecordingNext next = exits.get(bindingName);
        if (next == null)
        {
            throw new ConfigException("exit", "value: " + JsonStrings.quote(String.valueOf(bindingName))
                + " (expected one of: " + String.join(", ", exits.keySet()) + ")");
        }
        return next;
    }

    @Override
    public Upstream upstream(UpstreamOptions options)
    {
        throw new AssertionError("TestBindingContext has no upstream");
    }

    @Override
    public String env(String name)
    {
        return env.get(name);
    }

    /**
     * A stage that records each exchange it gets, and the exchange's {@link Exchange#targetModel()} at that moment,
     * and answers at once with {@code 200 text/plain} and its name as the body.
     */
    public static final class RecordingNext implements Next
    {
        private final String name;
        private final List<Exchange> received = new ArrayList<>();
        private final List<String> targetModels = new ArrayList<>();

        /** @param name the name this stage answers with */
        public RecordingNext(String name)
        {
            this.name = Objects.requireNonNull(name, "name");
        }

        /** @return the name this stage answers with */
        public String name()
        {
            return name;
        }

        /** @return the exchanges received so far, in order (a live, read-only view) */
        public List<Exchange> received()
        {
            return Collections.unmodifiableList(received);
        }

        /** @return each received exchange's target model as it was when received, in order (a live, read-only view) */
        public List<String> targetModels()
        {
            return Collections.unmodifiableList(targetModels);
        }

        @Override
        public CompletionStage<Reply> handle(Exchange exchange)
        {
            received.add(exchange);
            targetModels.add(exchange.targetModel());
            byte[] body = name.getBytes(StandardCharsets.UTF_8);
            return CompletableFuture.completedFuture(new Reply.Bytes(200, "text/plain", body, null));
        }
    }
}
