package dev.sluice.plugin.router;

import dev.sluice.api.binding.BindingContext;
import dev.sluice.api.config.ConfigException;
import dev.sluice.api.exchange.Exchange;
import dev.sluice.api.exchange.Next;
import dev.sluice.api.exchange.Reply;
import dev.sluice.api.upstream.Upstream;
import dev.sluice.api.upstream.UpstreamOptions;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/** A {@link BindingContext} whose exits record the exchanges they get and answer with their own name. */
final class TestContext implements BindingContext
{
    private final Map<String, RecordingNext> exits = new LinkedHashMap<>();

    TestContext(String... names)
    {
        for (String name : names)
            exits.put(name, new RecordingNext(name));
    }

    @Override
    public Next exit(String bindingName)
    {
        RecordingNext next = exits.get(bindingName);
        if (next == null)
            throw new ConfigException("bindings.test", "no exit named " + bindingName);
        return next;
    }

    RecordingNext recorder(String name)
    {
        return exits.get(name);
    }

    /** @return the total number of exchanges all exits received */
    int calls()
    {
        return exits.values().stream().mapToInt(n -> n.received.size()).sum();
    }

    @Override
    public Upstream upstream(UpstreamOptions options)
    {
        throw new UnsupportedOperationException("the router has no upstream");
    }

    @Override
    public String env(String name)
    {
        return null;
    }

    /** A stage that records what it gets and answers with its name as the body. */
    static final class RecordingNext implements Next
    {
        final String name;
        final List<Exchange> received = new ArrayList<>();
        final List<String> targetModels = new ArrayList<>();

        RecordingNext(String name)
        {
            this.name = name;
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
