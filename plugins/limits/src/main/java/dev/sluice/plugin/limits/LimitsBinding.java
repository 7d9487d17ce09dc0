package dev.sluice.plugin.limits;

import com.fasterxml.jackson.core.JsonGenerator;
import dev.sluice.api.ErrorKind;
import dev.sluice.api.GatewayException;
import dev.sluice.api.admin.AdminRoutes.AdminResponse;
import dev.sluice.api.exchange.Attributes;
import dev.sluice.api.binding.ProxyBinding;
import dev.sluice.api.binding.ServerBinding.Operation;
import dev.sluice.api.exchange.Completion;
import dev.sluice.api.exchange.Completion.CompletionListener;
import dev.sluice.api.exchange.Exchange;
import dev.sluice.api.exchange.Exchange.Identity;
import dev.sluice.api.exchange.Next;
import dev.sluice.api.exchange.Reply;
import dev.sluice.api.exchange.ResponseHeaders;
import dev.sluice.api.model.ChatRequest;
import dev.sluice.api.model.Usage;
import dev.sluice.api.binding.BindingContext.Scheduler;
import dev.sluice.support.codec.TokenEstimate;
import dev.sluice.support.config.ModelGlob;
import dev.sluice.support.json.Json;
import dev.sluice.support.redis.SharedRedis;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.math.BigDecimal;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;

/**
 * Admits an exchange only if every scope it falls in — its key (or {@code anonymous}), its team, its model — has room
 * for one more request, one more exchange in flight, its estimated tokens and its estimated cost; reserves them, and
 * settles the reservation from the real usage when the exchange completes ({@link Exchange#onComplete}).
 *
 * <p><b>Estimate.</b> Tokens: {@link TokenEstimate#inputTokens} of the request plus its max tokens (or
 * {@code default_max_tokens}). Cost: those tokens at the model's price (all input priced as uncached). Both are
 * computed, and the request decoded, only when a scope of the exchange has a token rate or a budget: with request
 * rates and concurrency alone the body is never decoded.
 *
 * <p><b>Token counts</b> ({@code COUNT_TOKENS} exchanges) take a request and a concurrency slot, and reserve no
 * tokens and no cost: counting generates nothing, and providers do not bill it. Their body is not decoded.
 *
 * <p><b>Settlement.</b> With usage from the provider: its tokens, and its cost with cached input at the cached price.
 * Without usage, when the client went away or the answer had a success status (a stream cancelled, or broken after it
 * started, or relayed without usage): the estimated input plus the output already relayed ({@link TokenEstimate#ofBytes}
 * of the response bytes written, never more than the output reserved), since the provider charged for what it
 * generated. Without usage and with an error status (a refusal by a later stage, an upstream error): nothing, the
 * reservation is released. The request itself always counts against the request rate.
 *
 * <p><b>Refusals</b> are 429 {@link ErrorKind#RATE_LIMITED} in the client's dialect and never reach the provider:
 * rates and concurrency with code {@code rate_limit_exceeded}, {@code retry-after} and OpenAI's
 * {@code x-ratelimit-{limit,remaining,reset}-{requests,tokens}} of the refusing scope; budgets with code
 * {@code insufficient_quota} and {@code retry-after} = seconds until the period resets. A budgeted exchange for a model
 * with no price is 403 {@code model_not_priced} unless {@code unpriced: free}.
 *
 * <p><b>Stores.</b> With the in-memory store admission is synchronous: the exchange goes on on the thread that called
 * {@link #handle}, and nothing is allocated for it but the reservation. With the Redis store ({@link RedisLimitStore})
 * the exchange goes on when Redis answered, on the thread that decoded the reply (see SharedRedis). When Redis is
 * unavailable (not connected, no answer within its timeout, overloaded, an error), {@code fail_open} admits the
 * exchange against this replica's own in-memory counters (settled there) and {@code fail_closed} refuses it with 503
 * {@link ErrorKind#UNAVAILABLE} in the client's dialect; either way the exchange gets the attribute
 * {@value #STORE_UNAVAILABLE} (the outcome) and {@value #STORE_UNAVAILABLE_BINDING} (this binding's name), which the
 * metrics plugin counts, and one warning is logged per streak of failures (one info when Redis answers again).
 *
 * <p>Thread-safe: immutable but for the stores, a cache of parsed key overrides and the store's failure streak.
 */
final class LimitsBinding implements ProxyBinding
{
    /** The exchange attribute set when the shared store was unavailable: {@code "fail_open"} or {@code "fail_closed"}. */
    static final String STORE_UNAVAILABLE = "limits.store_unavailable";
    /** The exchange attribute naming the limits binding whose shared store was unavailable. */
    static final String STORE_UNAVAILABLE_BINDING = "limits.store_unavailable_binding";

    private static final Logger LOG = LoggerFactory.getLogger(LimitsBinding.class);
    private static final String KEY_PREFIX = "key:";
    private static final String TEAM_PREFIX = "team:";
    private static final String ANONYMOUS = "anonymous";
    private static final String RATE_CODE = "rate_limit_exceeded";
    private static final String QUOTA_CODE = "insufficient_quota";
    private static final long NANOS_PER_SECOND = 1_000_000_000L;
    private static final BigDecimal NANOS_PER_UNIT = BigDecimal.valueOf(1_000_000_000L);

    private final String name;
    private final LimitStore store;
    private final RedisLimitStore shared;
    private final boolean failOpen;
    private final AtomicBoolean storeFailing = new AtomicBoolean();
    private final Limits keyLimits;
    private final Map<String, Limits> teams;
    private final Limits otherTeams;
    private final Limits anonymous;
    private final ModelRule[] models;
    private final PriceRule[] prices;
    private final boolean refuseUnpriced;
    private final long defaultMaxTokens;
    private final boolean chargeCacheHits;
    private final ConcurrentHashMap<String, KeyLimits> keyOverrides = new ConcurrentHashMap<>();
    private volatile Scheduler.Task eviction;
    private volatile Scheduler.Task renewal;
    private volatile SharedRedis redis;

    /**
     * @param name             the binding's name, for the admin snapshot
     * @param store            where the counters live: the in-memory store, or the Redis store's fail-open fallback
     * @param shared           the Redis store, or {@code null} to count in {@code store} only
     * @param failOpen         with {@code shared}: whether an exchange is admitted against {@code store} when Redis is
     *                         unavailable (else it is refused with 503)
     * @param keyLimits        every key's limits before its overrides ({@link Limits#NONE} for none)
     * @param teams            limits by exact team name
     * @param otherTeams       limits of a team not named ({@code "*"}), or {@code null}
     * @param anonymous        limits of exchanges without identity, or {@code null} to let them pass
     * @param models           model rules in config order
     * @param prices           price rules in config order
     * @param refuseUnpriced   whether a budgeted exchange for an unpriced model is refused (else it costs 0)
     * @param defaultMaxTokens output tokens reserved when the client sets none
     */
    LimitsBinding(String name, LimitStore store, RedisLimitStore shared, boolean failOpen, Limits keyLimits, Map<String, Limits> teams, Limits otherTeams,
                  Limits anonymous, List<ModelRule> models, List<PriceRule> prices, boolean refuseUnpriced,
                  long defaultMaxTokens, boolean chargeCacheHits)
    {
        this.chargeCacheHits = chargeCacheHits;
        this.name = name;
        this.store = store;
        this.shared = shared;
        this.failOpen = failOpen;
        this.keyLimits = keyLimits;
        this.teams = Map.copyOf(teams);
        this.otherTeams = otherTeams;
        this.anonymous = anonymous;
        this.models = models.toArray(new ModelRule[0]);
        this.prices = prices.toArray(new PriceRule[0]);
        this.refuseUnpriced = refuseUnpriced;
        this.defaultMaxTokens = defaultMaxTokens;
    }

    /** Keeps the periodic eviction task, cancelled in {@link #close()}. */
    void eviction(Scheduler.Task task)
    {
        this.eviction = task;
    }

    /** Keeps the shared store's lease renewal and connection, cancelled and closed in {@link #close()}. */
    void sharedStore(Scheduler.Task renewal, SharedRedis redis)
    {
        this.renewal = renewal;
        this.redis = redis;
    }

    @Override
    public CompletionStage<Reply> handle(Exchange exchange, Next next)
    {
        // The gateway's own warm-up is charged nothing: every limit and budget is as full after it as before. With Redis
        // it still makes one call that reads only Redis's clock, and goes on from its reply as an admission does: the
        // path from a reply to the rest of the chain is compiled before the first burst of clients (a cold one missed
        // the store's wait, and failed open or closed).
        if (exchange.warmup())
        {
            if (shared == null)
                return next.handle(exchange);
            return shared.probe().handle((now, failure) -> next.handle(exchange)).thenCompose(Function.identity());
        }
        LimitStore.Demand[] demands;
        try
        {
            demands = demands(exchange);
        }
        catch (GatewayException e)
        {
            return CompletableFuture.failedFuture(e);
        }
        if (demands == null)
        {
            // Nothing to admit; a priced exchange still gets its cost for the request log.
            Price listed = listedPrice(exchange.targetModel());
            if (listed != null)
                exchange.onComplete(new Pricing(listed));
            return next.handle(exchange);
        }

        boolean needsTokens = false;
        boolean budgeted = false;
        // A token count generates nothing and providers do not bill it: a request and a slot, no tokens, no cost.
        if (exchange.operation() != Operation.COUNT_TOKENS)
        {
            for (LimitStore.Demand demand : demands)
            {
                needsTokens |= demand.limits().needsTokens();
                budgeted |= demand.limits().budgeted();
            }
        }
        long input = 0;
        long output = 0;
        long cost = 0;
        Price price = null;
        if (needsTokens)
        {
            try
            {
                long[] estimate = estimate(exchange);
                input = estimate[0];
                output = estimate[1];
            }
            catch (GatewayException e)
            {
                return CompletableFuture.failedFuture(e);
            }
            if (budgeted)
            {
                price = price(exchange.targetModel());
                if (price == null)
                    return CompletableFuture.failedFuture(unpriced(exchange.targetModel()));
                cost = price.cost(input, 0, output);
            }
        }
        if (shared != null)
            return admitShared(exchange, next, demands, input, output, cost, price);
        return admitted(exchange, next, store, store.reserve(demands, input + output, cost), demands, input, output, price);
    }

    /** Continues an exchange {@code admission} admitted, with its settlement, or refuses it. */
    private CompletionStage<Reply> admitted(Exchange exchange, Next next, Settler settler,
                                            LimitStore.Admission admission, LimitStore.Demand[] demands, long input,
                                            long output, Price price)
    {
        if (admission instanceof LimitStore.Refusal refusal)
            return CompletableFuture.failedFuture(refused(refusal, demands, input + output));
        Price listed = price != null && price != Price.FREE ? price : listedPrice(exchange.targetModel());
        exchange.onComplete(new Settlement(settler, (LimitStore.Reservation) admission, input, output, price, listed,
            chargeCacheHits));
        return next.handle(exchange);
    }

    /** Admits through the Redis store: the exchange goes on when Redis answered, or failed (see the class comment). */
    private CompletionStage<Reply> admitShared(Exchange exchange, Next next, LimitStore.Demand[] demands, long input,
                                               long output, long cost, Price price)
    {
        return shared.reserve(demands, input + output, cost).handle((admission, failure) ->
        {
            if (failure == null)
            {
                if (storeFailing.get() && storeFailing.compareAndSet(true, false))
                    LOG.info("limits binding {}: the shared store answers again", name);
                return admitted(exchange, next, shared, admission, demands, input, output, price);
            }
            Throwable cause = failure instanceof CompletionException && failure.getCause() != null ? failure.getCause()
                : failure;
            if (!storeFailing.get() && storeFailing.compareAndSet(false, true))
            {
                LOG.warn("limits binding {}: the shared store is unavailable ({}); {} until it answers again", name,
                    cause.getMessage(), failOpen ? "admitting requests against this replica's own counters"
                        : "refusing requests with 503");
            }
            exchange.attribute(STORE_UNAVAILABLE_BINDING, name);
            if (!failOpen)
            {
                exchange.attribute(STORE_UNAVAILABLE, LimitsOptions.StoreOptions.FAIL_CLOSED);
                return CompletableFuture.<Reply>failedFuture(storeUnavailable());
            }
            exchange.attribute(STORE_UNAVAILABLE, LimitsOptions.StoreOptions.FAIL_OPEN);
            return admitted(exchange, next, store, store.reserve(demands, input + output, cost), demands, input, output,
                price);
        }).thenCompose(Function.identity());
    }

    private static GatewayException storeUnavailable()
    {
        return new GatewayException(ErrorKind.UNAVAILABLE, 503, "limits cannot be checked: the gateway's shared limits"
            + " store did not answer in time; retry shortly", null, "limits_unavailable", null,
            ResponseHeaders.of("retry-after", "1"));
    }

    /**
     * @return the input and output tokens to reserve: a chat turn's estimated input and its {@code max_tokens} (else
     *         the default); an embeddings request's inputs and no output; nothing for any other operation
     * @throws GatewayException if the request does not decode
     */
    private long[] estimate(Exchange exchange)
    {
        switch (exchange.operation())
        {
            case EMBEDDINGS:
                try
                {
                    return new long[]{TokenEstimate.inputTokens(exchange.embeddingRequest()), 0};
                }
                catch (GatewayException e)
                {
                    // Token-id inputs reach a provider of the client's dialect undecoded: estimated from the bytes.
                    if (e.kind() != ErrorKind.UNSUPPORTED)
                        throw e;
                    return new long[]{TokenEstimate.ofBytes(exchange.body().length), 0};
                }
            case CHAT:
                ChatRequest request = exchange.request();
                Integer max = request.sampling().maxTokens();
                return new long[]{TokenEstimate.inputTokens(request), max != null && max > 0 ? max : defaultMaxTokens};
            default:
                // Counts never get here (they reserve no tokens); listings and the like: no model reads anything.
                return new long[]{0, 0};
        }
    }

    @Override
    public void close()
    {
        Scheduler.Task task = eviction;
        if (task != null)
            task.cancel();
        Scheduler.Task renew = renewal;
        if (renew != null)
            renew.cancel();
        // The settles still waiting for a reserve go now, before the connection is released.
        if (shared != null)
            shared.flushSettles();
        SharedRedis connection = redis;
        if (connection != null)
            connection.close();
    }

    /** @return the scopes {@code exchange} falls in with their limits, or {@code null} if none limits it */
    private LimitStore.Demand[] demands(Exchange exchange)
    {
        LimitStore.Demand caller = null;
        LimitStore.Demand team = null;
        LimitStore.Demand model = null;
        Identity identity = exchange.identity();
        if (identity != null)
        {
            Limits key = keyLimits(identity);
            if (key.any())
                caller = new LimitStore.Demand(KEY_PREFIX + identity.keyId(), key);
            if (identity.team() != null)
            {
                Limits limits = teams.getOrDefault(identity.team(), otherTeams);
                if (limits != null)
                    team = new LimitStore.Demand(TEAM_PREFIX + identity.team(), limits);
            }
        }
        else if (anonymous != null)
            caller = new LimitStore.Demand(ANONYMOUS, anonymous);
        String targetModel = exchange.targetModel();
        for (ModelRule rule : models)
        {
            if (rule.glob.matches(targetModel))
            {
                model = rule.demand;
                break;
            }
        }
        int n = (caller == null ? 0 : 1) + (team == null ? 0 : 1) + (model == null ? 0 : 1);
        if (n == 0)
            return null;
        LimitStore.Demand[] demands = new LimitStore.Demand[n];
        int i = 0;
        if (caller != null)
            demands[i++] = caller;
        if (team != null)
            demands[i++] = team;
        if (model != null)
            demands[i] = model;
        return demands;
    }

    /** @return the key's limits: the options' {@code key}, overridden by its metadata; parsed once per metadata map */
    private Limits keyLimits(Identity identity)
    {
        Map<String, String> metadata = identity.metadata();
        if (metadata.isEmpty())
            return keyLimits;
        KeyLimits cached = keyOverrides.get(identity.keyId());
        // The keys plugin builds one identity per key definition: the same map until the key changes.
        if (cached != null && cached.metadata == metadata)
            return cached.limits;
        Limits limits = KeyOverrides.apply(keyLimits, identity.keyId(), metadata);
        keyOverrides.put(identity.keyId(), new KeyLimits(metadata, limits));
        return limits;
    }

    private Price price(String model)
    {
        for (PriceRule rule : prices)
        {
            if (rule.glob.matches(model))
                return rule.price;
        }
        return refuseUnpriced ? null : Price.FREE;
    }

    /** @return the price a rule of the table gives {@code model}, or {@code null} if none does ({@code unpriced} aside) */
    private Price listedPrice(String model)
    {
        for (PriceRule rule : prices)
        {
            if (rule.glob.matches(model))
                return rule.price;
        }
        return null;
    }

    /**
     * Sets {@link Attributes#COST_USD} on the exchange: the cost of the provider's usage at {@code price}, in the price
     * table's currency, which the attribute takes to be US dollars. Nothing without usage (what the exchange cost is
     * then unknown; a budget charges its estimate, see {@link Settlement}).
     */
    /** @return whether a response cache served the exchange ({@link Attributes#CACHE} is {@code "hit"}) */
    private static boolean cacheHit(Completion completion)
    {
        Exchange exchange = completion.exchange();
        return exchange != null && "hit".equals(exchange.attribute(Attributes.CACHE));
    }

    private static void recordCost(Completion completion, Price price)
    {
        Usage usage = completion.usage();
        Exchange exchange = completion.exchange();
        if (usage != null && price != null && exchange != null)
            exchange.attribute(Attributes.COST_USD, price.cost(usage) / 1e9);
    }

    private static GatewayException unpriced(String model)
    {
        return new GatewayException(ErrorKind.PERMISSION, 403, "model: " + shown(model) + " has no price, and a budget"
            + " applies to this request (expected: a model the gateway's price table lists)", "model", "model_not_priced",
            null);
    }

    /** @return the 429 for {@code refusal}, with its headers */
    GatewayException refused(LimitStore.Refusal refusal, LimitStore.Demand[] demands, long tokens)
    {
        LimitStore.Demand demand = demands[refusal.demand()];
        Limits limits = demand.limits();
        String who = describe(demand.scope());
        String retry = refusal.retryAfterNanos() > 0 ? goDuration(refusal.retryAfterNanos()) : null;
        ResponseHeaders headers = ResponseHeaders.EMPTY;
        if (refusal.retryAfterNanos() > 0)
            headers = headers.with("retry-after", Long.toString(ceilSeconds(refusal.retryAfterNanos())));
        headers = rateHeaders(headers, "requests", refusal.requests());
        headers = rateHeaders(headers, "tokens", refusal.tokens());
        String message;
        String code = RATE_CODE;
        switch (refusal.reason())
        {
            case REQUESTS:
                message = "rate limit reached for " + who + ": " + limits.rpm() + " requests per minute; retry in " + retry;
                break;
            case TOKENS:
                message = "rate limit reached for " + who + ": " + limits.tpm() + " tokens per minute, and this request"
                    + " reserves " + tokens + " (its estimated input and max tokens); retry in " + retry;
                break;
            case TOKENS_TOO_LARGE:
                message = "request too large for " + who + ": it reserves " + tokens + " tokens (its estimated input and"
                    + " max tokens), more than the limit of " + limits.tpm() + " tokens per minute; lower max tokens or"
                    + " shorten the prompt";
                break;
            case CONCURRENCY:
                headers = ResponseHeaders.of("retry-after", "1");
                message = "concurrency limit reached for " + who + ": " + limits.maxConcurrent()
                    + " requests in flight; retry when one completes";
                break;
            case BUDGET:
                code = QUOTA_CODE;
                message = "budget exhausted for " + who + ": " + amount(limits.budget()).toPlainString() + " per "
                    + limits.period() + " is spent or reserved by requests in flight; it resets in " + retry;
                break;
            default:
                throw new IllegalStateException("reason: " + refusal.reason());
        }
        return new GatewayException(ErrorKind.RATE_LIMITED, 429, message, null, code, null, headers);
    }

    private static ResponseHeaders rateHeaders(ResponseHeaders headers, String what, LimitStore.RateStatus status)
    {
        if (status == null)
            return headers;
        return headers.with("x-ratelimit-limit-" + what, Long.toString(status.limit()))
            .with("x-ratelimit-remaining-" + what, Long.toString(status.remaining()))
            .with("x-ratelimit-reset-" + what, goDuration(status.resetNanos()));
    }

    /** @return {@code key:ci-bot} as {@code key ci-bot}, {@code anonymous} as {@code anonymous callers} */
    private static String describe(String scope)
    {
        if (scope.equals(ANONYMOUS))
            return "anonymous callers";
        int colon = scope.indexOf(':');
        return scope.substring(0, colon) + " " + shown(scope.substring(colon + 1));
    }

    private static String shown(String value)
    {
        return value.length() > 200 ? value.substring(0, 200) + "..." : value;
    }

    private static long ceilSeconds(long nanos)
    {
        return Math.max(1, (nanos + NANOS_PER_SECOND - 1) / NANOS_PER_SECOND);
    }

    /**
     * @return {@code nanos} as OpenAI writes rate-limit resets (Go durations): {@code 20ms} under a second (rounded
     *         up), else whole seconds rounded up: {@code 6s}, {@code 1m2s}, {@code 1h0m5s}; {@code 0s} for 0
     */
    static String goDuration(long nanos)
    {
        if (nanos <= 0)
            return "0s";
        if (nanos < NANOS_PER_SECOND)
            return ((nanos + 999_999) / 1_000_000) + "ms";
        long seconds = ceilSeconds(nanos);
        long hours = seconds / 3600;
        long minutes = seconds / 60 % 60;
        long rest = seconds % 60;
        if (hours > 0)
            return hours + "h" + minutes + "m" + rest + "s";
        if (minutes > 0)
            return minutes + "m" + rest + "s";
        return rest + "s";
    }

    private static BigDecimal amount(long nanos)
    {
        BigDecimal value = new BigDecimal(nanos).divide(NANOS_PER_UNIT).stripTrailingZeros();
        return value.scale() < 0 ? value.setScale(0) : value;
    }

    /**
     * @return the admin endpoint's answer: every scope's state, sorted by scope. With the Redis store: the scopes this
     *         replica used, as Redis holds them (503 when Redis does not answer)
     */
    CompletionStage<AdminResponse> snapshot()
    {
        if (shared == null)
            return CompletableFuture.completedFuture(render(store.snapshot()));
        return shared.snapshot().handle((scopes, failure) -> failure == null ? render(scopes)
            : AdminResponse.json(503, "{\"binding\":" + quoted(name) + ",\"error\":\"the shared limits store did not answer\"}"));
    }

    private static String quoted(String text)
    {
        StringWriter out = new StringWriter();
        try (JsonGenerator g = Json.FACTORY.createGenerator(out))
        {
            g.writeString(text);
        }
        catch (IOException e)
        {
            throw new UncheckedIOException(e);
        }
        return out.toString();
    }

    private AdminResponse render(List<LimitStore.ScopeSnapshot> snapshot)
    {
        List<LimitStore.ScopeSnapshot> scopes = new ArrayList<>(snapshot);
        scopes.sort(Comparator.comparing(LimitStore.ScopeSnapshot::scope));
        StringWriter out = new StringWriter();
        try (JsonGenerator g = Json.FACTORY.createGenerator(out))
        {
            g.writeStartObject();
            g.writeStringField("binding", name);
            g.writeArrayFieldStart("scopes");
            for (LimitStore.ScopeSnapshot s : scopes)
            {
                Limits limits = s.limits();
                g.writeStartObject();
                g.writeStringField("scope", s.scope());
                g.writeNumberField("in_flight", s.inFlight());
                if (limits.maxConcurrent() > 0)
                    g.writeNumberField("max_concurrent", limits.maxConcurrent());
                rate(g, "requests", s.requests());
                rate(g, "tokens", s.tokens());
                if (limits.budgeted())
                {
                    g.writeObjectFieldStart("budget");
                    g.writeNumberField("amount", amount(limits.budget()));
                    g.writeStringField("period", limits.period().toString());
                    g.writeNumberField("spent", amount(s.spent()));
                    g.writeNumberField("reserved", amount(s.reserved()));
                    g.writeNumberField("remaining", amount(Math.max(0, limits.budget() - s.spent() - s.reserved())));
                    g.writeStringField("resets_at", Instant.ofEpochMilli(s.windowEndMillis()).toString());
                    g.writeEndObject();
                }
                g.writeEndObject();
            }
            g.writeEndArray();
            g.writeEndObject();
        }
        catch (IOException e)
        {
            throw new UncheckedIOException(e);
        }
        return AdminResponse.json(200, out.toString());
    }

    private static void rate(JsonGenerator g, String what, LimitStore.RateStatus status) throws IOException
    {
        if (status == null)
            return;
        g.writeObjectFieldStart(what);
        g.writeNumberField("limit", status.limit());
        g.writeNumberField("remaining", status.remaining());
        g.writeStringField("reset", goDuration(status.resetNanos()));
        g.writeEndObject();
    }

    /** A model glob and the demand of its scope, built once. */
    record ModelRule(ModelGlob glob, LimitStore.Demand demand)
    {
    }

    /** A price glob and its price. */
    record PriceRule(ModelGlob glob, Price price)
    {
    }

    /** A key's parsed overrides and the metadata map they were parsed from. */
    private record KeyLimits(Map<String, String> metadata, Limits limits)
    {
    }

    /** Records the cost of a priced exchange that no scope limits: see {@link #recordCost}. */
    private static final class Pricing implements CompletionListener
    {
        private final Price price;

        Pricing(Price price)
        {
            this.price = price;
        }

        @Override
        public void completed(Completion completion)
        {
            if (cacheHit(completion))
                completion.exchange().attribute(Attributes.COST_USD, 0.0);
            else
                recordCost(completion, price);
        }
    }

    /**
     * Settles one reservation when its exchange completes; see the class comment for what is charged. Runs on the
     * thread that completed the exchange: a few compare-and-sets (in memory), or one script call sent and not awaited
     * (Redis). With the provider's usage and a listed
     * price it also sets the exchange's {@link Attributes#COST_USD} (before the gateway-wide listeners, such as the
     * request log, run).
     */
    private static final class Settlement implements CompletionListener
    {
        private final Settler store;
        private final LimitStore.Reservation reservation;
        private final long input;
        private final long output;
        private final Price price;
        private final Price listed;
        private final boolean chargeCacheHits;

        /**
         * @param price           what the budget charges with, or {@code null} when no scope has a budget
         * @param listed          the model's price in the table, or {@code null}: the cost recorded on the exchange
         * @param chargeCacheHits whether an answer a response cache served is charged (the option)
         */
        Settlement(Settler store, LimitStore.Reservation reservation, long input, long output, Price price, Price listed,
                   boolean chargeCacheHits)
        {
            this.chargeCacheHits = chargeCacheHits;
            this.store = store;
            this.reservation = reservation;
            this.input = input;
            this.output = output;
            this.price = price;
            this.listed = listed;
        }

        @Override
        public void completed(Completion completion)
        {
            if (!chargeCacheHits && cacheHit(completion))
            {
                // Served from a response cache: no provider tokens were spent, and it cost nothing.
                store.release(reservation);
                if (listed != null && completion.exchange() != null)
                    completion.exchange().attribute(Attributes.COST_USD, 0.0);
                return;
            }
            Usage usage = completion.usage();
            if (usage != null)
            {
                recordCost(completion, listed);
                store.settle(reservation, Math.max(0, usage.inputTokens()) + Math.max(0, usage.outputTokens()),
                    price == null ? 0 : price.cost(usage));
            }
            else if (completion.outcome() == Completion.Outcome.CLIENT_GONE || completion.status() < 400)
            {
                // The provider read the whole prompt and generated (and charged for) at least what was relayed: settle
                // the estimate of both rather than free the reservation. This is a cancelled stream, a stream that
                // broke after it started, and a success whose usage the gateway did not learn (a provider that
                // reports none): freeing those would let a budget be bypassed. Relayed bytes carry the dialect's
                // framing, so they overestimate the tokens; never charge more output than was reserved.
                long relayed = Math.min(TokenEstimate.ofBytes(completion.responseBytes()), output);
                store.settle(reservation, input + relayed, price == null ? 0 : price.cost(input, 0, relayed));
            }
            else
                store.release(reservation);
        }
    }
}
