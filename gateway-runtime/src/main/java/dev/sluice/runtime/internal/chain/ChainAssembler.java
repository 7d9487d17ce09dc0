package dev.sluice.runtime.internal.chain;

import dev.sluice.api.ErrorKind;
import dev.sluice.api.admin.AdminRoutes;
import dev.sluice.api.exchange.Completion.CompletionListener;
import dev.sluice.api.binding.BindingContext.Scheduler;
import dev.sluice.runtime.internal.service.RuntimeServices;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import dev.sluice.api.GatewayException;
import dev.sluice.api.binding.BindingConfig;
import dev.sluice.api.binding.BindingContext;
import dev.sluice.api.binding.ClientBinding;
import dev.sluice.api.binding.ClientBindingFactory;
import dev.sluice.api.binding.ServerBinding.Endpoint;
import dev.sluice.api.binding.ProxyBinding;
import dev.sluice.api.binding.ProxyBindingFactory;
import dev.sluice.api.binding.BindingConfig.RouteConfig;
import dev.sluice.api.binding.ServerBinding;
import dev.sluice.api.binding.ServerBindingFactory;
import dev.sluice.api.binding.BindingContext.Target;
import dev.sluice.api.exchange.Exchange;
import dev.sluice.api.config.ConfigException;
import dev.sluice.api.exchange.Next;
import dev.sluice.api.exchange.Reply;
import dev.sluice.api.upstream.Upstream;
import dev.sluice.api.upstream.UpstreamOptions;
import dev.sluice.runtime.internal.config.GatewayConfig;
import dev.sluice.runtime.internal.plugin.BindingTypes;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.function.BiFunction;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * Creates every binding of a validated config through its plugin factory, exits first (the graph has no cycles),
 * and wires each stage to the next. Done once at startup; nothing here runs per request except the tiny
 * {@link #guard} wrapper that turns a synchronous throw into a failed stage.
 */
public final class ChainAssembler
{
    private static final Logger LOG = LoggerFactory.getLogger(ChainAssembler.class);

    private final BindingTypes types;
    private final BiFunction<String, UpstreamOptions, Upstream> upstreams;
    private final Function<String, String> env;
    private final Map<String, Next> stages = new HashMap<>();
    private final List<ServerRoute> servers = new ArrayList<>();
    private final Set<String> models = new LinkedHashSet<>();
    private final List<String> bindingNames = new ArrayList<>();
    // By binding index: a client binding's upstream dialect (null if it does not say), null for a proxy binding.
    private final List<String> upstreamDialects = new ArrayList<>();
    private final RuntimeServices services;
    private final List<Closer> created = new ArrayList<>();
    private final Map<String, CountedTarget> targets = new HashMap<>();

    /**
     * @param upstreams creates the HTTP client of a client binding, given its name and options
     * @param services  what the runtime shares with plugins
     */
    public ChainAssembler(BindingTypes types, BiFunction<String, UpstreamOptions, Upstream> upstreams, Function<String, String> env,
                          RuntimeServices services)
    {
        this.types = types;
        this.upstreams = upstreams;
        this.env = env;
        this.services = services;
    }

    /** A created binding's {@code close()}, with its name for the log. */
    private record Closer(String name, Runnable close)
    {
    }

    /** A server binding with the stage it starts. */
    public record ServerRoute(String name, ServerBinding binding, Next next)
    {
    }

    /**
     * The assembled chain: server bindings with their entry stages, the models the routes advertise, and the names
     * of the proxy and client bindings by the index {@link DefaultExchange#enter(int)} records.
     */
    public record Chain(List<ServerRoute> servers, List<String> models, List<String> bindingNames,
                        CompletionListener[] completionListeners, Runnable closeBindings, String[] upstreamDialects)
    {
        /** A chain with no completion listeners and nothing to close (tests). */
        public Chain(List<ServerRoute> servers, List<String> models, List<String> bindingNames)
        {
            this(servers, models, bindingNames, new CompletionListener[0], () -> { }, new String[bindingNames.size()]);
        }

        /**
         * @param bindingIndex a client binding's index ({@link DefaultExchange#lastClient()})
         * @return its name, or {@code null} for -1
         */
        public String bindingName(int bindingIndex)
        {
            return bindingIndex < 0 ? null : bindingNames.get(bindingIndex);
        }

        /**
         * @param bindingIndex a client binding's index ({@link DefaultExchange#lastClient()})
         * @return the dialect it speaks upstream, or {@code null} if it does not say or for -1
         */
        public String upstreamDialect(int bindingIndex)
        {
            return bindingIndex < 0 || bindingIndex >= upstreamDialects.length ? null : upstreamDialects[bindingIndex];
        }
    }

    /** Creates all bindings of {@code config}. */
    public Chain assemble(GatewayConfig config)
    {
        try
        {
            return assembleAll(config);
        }
        catch (RuntimeException | Error e)
        {
            // Bindings created before the failure may have scheduled work or opened files: undo it.
            closeAll();
            throw e;
        }
    }

    private Chain assembleAll(GatewayConfig config)
    {
        Map<String, BindingConfig> bindings = config.bindings();
        Map<String, String> endpoints = new HashMap<>();
        for (BindingConfig b : bindings.values())
        {
            switch (b.kind())
            {
                case SERVER ->
                {
                    Next entry = stage(b.exit(), bindings);
                    ServerBindingFactory factory = types.server(b.type(), b.path() + ".type");
                    ServerBinding server = create(b, factory, () -> factory.create(b, context(b, bindings)));
                    if (server == null)
                        throw new ConfigException(b.path(), "the " + b.type() + " factory created no binding");
                    for (Endpoint e : server.endpoints())
                    {
                        String key = e.method() + " " + e.path() + (e.header() == null ? "" : " with " + e.header());
                        String previous = endpoints.putIfAbsent(key, b.name());
                        if (previous != null)
                            throw new ConfigException(b.path(), "endpoint " + key + " is already served by bindings." + previous);
                    }
                    created.add(new Closer(b.name(), server::close));
                    servers.add(new ServerRoute(b.name(), server, entry));
                }
                default -> stage(b.name(), bindings);
            }
        }
        return new Chain(List.copyOf(servers), List.copyOf(models), List.copyOf(bindingNames),
            services.completionListeners(), this::closeAll, upstreamDialects.toArray(new String[0]));
    }

    /** Closes every binding created so far, the last created first; what a {@code close()} throws is logged. */
    private void closeAll()
    {
        List<Closer> toClose;
        synchronized (created)
        {
            toClose = new ArrayList<>(created);
            created.clear();
        }
        for (int i = toClose.size() - 1; i >= 0; i--)
        {
            Closer c = toClose.get(i);
            try
            {
                c.close().run();
            }
            catch (Throwable t)
            {
                LOG.error("bindings.{}: close() failed", c.name(), t);
            }
        }
    }

    /**
     * Runs a factory's {@code create}. A class the plugin cannot load (a library left out of its jar, a shared class the
     * runtime lacks) becomes a config error naming the binding, the plugin's jar and the class loader's explanation,
     * instead of a bare {@code NoClassDefFoundError}.
     */
    private <T> T create(BindingConfig b, Object factory, Supplier<T> create)
    {
        try
        {
            return create.get();
        }
        catch (LinkageError e)
        {
            throw new ConfigException(b.path() + ".type", "value: \"" + b.type() + "\" (" + types.origin(factory)
                + ") failed to create the binding: " + BindingTypes.rootMessage(e));
        }
    }

    private Next stage(String name, Map<String, BindingConfig> bindings)
    {
        Next existing = stages.get(name);
        if (existing != null)
            return existing;
        BindingConfig b = bindings.get(name);
        Next stage;
        switch (b.kind())
        {
            case CLIENT ->
            {
                ClientBindingFactory factory = types.client(b.type(), b.path() + ".type");
                ClientBinding client = create(b, factory, () -> factory.create(b, context(b, bindings)));
                if (client == null)
                    throw new ConfigException(b.path(), "the " + b.type() + " factory created no binding");
                created.add(new Closer(name, client::close));
                stage = guard(timedClient(bindingNames.size(), name, client::handle));
                bindingNames.add(name);
                upstreamDialects.add(client.dialect());
            }
            case PROXY ->
            {
                // The exit first, so that it is closed after this binding.
                Next next = b.exit() != null ? stage(b.exit(), bindings) : NO_EXIT;
                ProxyBindingFactory factory = types.proxy(b.type(), b.path() + ".type");
                ProxyBinding proxy = create(b, factory, () -> factory.create(b, context(b, bindings)));
                if (proxy == null)
                    throw new ConfigException(b.path(), "the " + b.type() + " factory created no binding");
                created.add(new Closer(name, proxy::close));
                models.addAll(proxy.advertisedModels());
                stage = guard(timed(bindingNames.size(), exchange -> proxy.handle(exchange, next)));
                bindingNames.add(name);
                upstreamDialects.add(null);
            }
            default -> throw new IllegalStateException("a server binding is never an exit");
        }
        stages.put(name, stage);
        return stage;
    }

    private static final Next NO_EXIT = exchange -> CompletableFuture.failedFuture(
        new GatewayException(ErrorKind.NOT_FOUND, 404, "model: \"" + exchange.model() + "\" is not served by this gateway",
            "model", "model_not_found", null));

    /** Records entry into the binding numbered {@code index}, for the per-stage breakdown. */
    private static Next timed(int index, Next next)
    {
        return exchange ->
        {
            if (exchange instanceof DefaultExchange e)
                e.enter(index);
            return next.handle(exchange);
        };
    }

    /** As {@link #timed}, for a client binding: also remembered as the exchange's route, and an attempt of it. */
    private static Next timedClient(int index, String name, Next next)
    {
        return exchange ->
        {
            if (exchange instanceof DefaultExchange e)
                e.enterClient(index, name);
            return next.handle(exchange);
        };
    }

    /** Turns a synchronous throw (a decode failure, say) into a failed stage, and a null stage into a bug report. */
    static Next guard(Next next)
    {
        return exchange ->
        {
            try
            {
                CompletionStage<Reply> reply = next.handle(exchange);
                if (reply == null)
                    return CompletableFuture.failedFuture(new GatewayException(ErrorKind.INTERNAL, "a binding returned no reply"));
                return reply;
            }
            catch (Throwable t)
            {
                return CompletableFuture.failedFuture(t);
            }
        };
    }

    private BindingContext context(BindingConfig b, Map<String, BindingConfig> bindings)
    {
        Set<String> allowed = new HashSet<>();
        if (b.exit() != null)
            allowed.add(b.exit());
        for (RouteConfig r : b.routes())
            allowed.addAll(r.exits());
        return new BindingContext()
        {
            @Override
            public Next exit(String bindingName)
            {
                if (!allowed.contains(bindingName))
                    throw new ConfigException(b.path(), "asked for exit \"" + bindingName + "\" that its config does not name");
                return stage(bindingName, bindings);
            }

            @Override
            public Target target(String bindingName)
            {
                Next stage = exit(bindingName);
                return targets.computeIfAbsent(bindingName, n ->
                {
                    int index = bindingNames.indexOf(n);
                    return new CountedTarget(n, index < 0 ? null : upstreamDialects.get(index), stage);
                });
            }

            @Override
            public Upstream upstream(UpstreamOptions options)
            {
                return upstreams.apply(b.name(), options);
            }

            @Override
            public String env(String name)
            {
                return env.apply(name);
            }

            @Override
            public String bindingName()
            {
                return b.name();
            }

            @Override
            public boolean checkOnly()
            {
                return services.checkOnly();
            }

            @Override
            public Executor executor()
            {
                return services.executor();
            }

            @Override
            public void watchLoop(Executor loop)
            {
                services.watchLoop(loop);
            }

            @Override
            public Scheduler scheduler()
            {
                return services.scheduler();
            }

            @Override
            public AdminRoutes admin()
            {
                return services.adminRoutes(b.name());
            }

            @Override
            public void onComplete(CompletionListener listener)
            {
                services.addCompletionListener(listener);
            }

            @Override
            public Set<String> advertisedModels()
            {
                return java.util.Collections.unmodifiableSet(models);
            }

            @Override
            public dev.sluice.api.binding.BindingContext.RuntimeStats runtimeStats()
            {
                return services.runtimeStats();
            }
        };
    }
}
