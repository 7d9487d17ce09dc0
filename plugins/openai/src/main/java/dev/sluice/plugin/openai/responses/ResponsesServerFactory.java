package dev.sluice.plugin.openai.responses;

import dev.sluice.api.binding.BindingConfig;
import dev.sluice.api.binding.BindingContext;
import dev.sluice.api.binding.ServerBinding;
import dev.sluice.api.binding.ServerBindingFactory;
import dev.sluice.support.config.Options;
import dev.sluice.support.redis.SharedRedis;
import org.pf4j.Extension;

/**
 * Creates {@code openai-responses} server bindings: clients speak OpenAI's Responses API on the path
 * ({@value #DEFAULT_PATH} by default), with the responses it answered by translation kept in a
 * {@link ResponseStore} (this process's memory, or Redis shared by every replica with {@code store.redis}) for
 * {@code previous_response_id} and the stored-response endpoints ({@link ResponsesServer}).
 * The request's {@code input} may be a string, so {@code max_messages} (the canonical turns) and
 * {@code max_input_tokens} are checked on the decoded request, which costs a decode per request only when one of them
 * is set. Each binding has its own store (in Redis, its own keys only when its {@code prefix} differs).
 *
 * <pre>{@code
 * north_responses:
 *   { type: openai-responses, kind: server, exit: keys, options: { path: /v1/responses, store: { ttl: 30m } } }
 * }</pre>
 */
@Extension
public final class ResponsesServerFactory implements ServerBindingFactory
{
    /** OpenAI's own path. */
    public static final String DEFAULT_PATH = "/v1/responses";

    @Override
    public String type()
    {
        return ResponsesCodec.DIALECT;
    }

    @Override
    public ServerBinding create(BindingConfig config, BindingContext context)
    {
        ResponsesServerOptions options = Options.bind(config.options(), ResponsesServerOptions.class,
            config.optionsPath());
        ResponsesServerOptions.StoreOptions store = options.store();
        // Under `sluice check` no connection is opened (open answers null): the memory store stands in, unused.
        SharedRedis redis = store.redis() == null ? null : SharedRedis.open(store.redis(), context);
        ResponseStore responses = redis != null ? new RedisResponseStore(redis, context.executor(), store.ttl(),
            store.maxBytes())
            : new MemoryResponseStore(store.maxBytes(), store.ttl());
        return new ResponsesServer(options.path() == null ? DEFAULT_PATH : options.path(), options.limits(),
            responses, store.maxBytes());
    }
}
