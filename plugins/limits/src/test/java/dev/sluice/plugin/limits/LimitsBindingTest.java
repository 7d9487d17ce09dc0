package dev.sluice.plugin.limits;

import com.fasterxml.jackson.databind.JsonNode;
import dev.sluice.api.ErrorKind;
import dev.sluice.api.GatewayException;
import dev.sluice.api.admin.AdminRoutes.AdminRequest;
import dev.sluice.api.admin.AdminRoutes.AdminResponse;
import dev.sluice.api.binding.BindingConfig;
import dev.sluice.api.binding.BindingConfig.BindingKind;
import dev.sluice.api.binding.ProxyBinding;
import dev.sluice.api.config.ConfigException;
import dev.sluice.api.exchange.Attributes;
import dev.sluice.api.exchange.Completion;
import dev.sluice.api.exchange.Exchange.Identity;
import dev.sluice.api.exchange.Reply;
import dev.sluice.api.model.Usage;
import dev.sluice.api.testing.TestBindingContext;
import dev.sluice.support.json.Json;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The admission logic of the {@code limits} binding: which scopes apply (key with its metadata overrides, team,
 * model, anonymous), when the request is decoded, what is reserved and settled, and the refusals' statuses, codes,
 * messages and headers. The counters themselves are {@link MemoryLimitStoreTest}'s.
 */
class LimitsBindingTest
{
    // 400 chars: 100 tokens, plus 4 for the message.
    private static final String PROMPT = "x".repeat(400);
    private static final long PROMPT_TOKENS = 104;

    private final LimitsFactory factory = new LimitsFactory();
    private TestBindingContext context;

    private ProxyBinding binding(String optionsJson)
    {
        return binding(optionsJson, true);
    }

    private ProxyBinding binding(String optionsJson, boolean checkOnly)
    {
        context = new TestBindingContext("next").checkOnly(checkOnly).refuseOneShotSchedules();
        return factory.create(config(optionsJson), context);
    }

    private static BindingConfig config(String optionsJson)
    {
        try
        {
            JsonNode options = Json.MAPPER.readTree(optionsJson);
            return new BindingConfig("limits", "limits", BindingKind.PROXY, options, "next", List.of());
        }
        catch (Exception e)
        {
            throw new IllegalArgumentException(e);
        }
    }

    private static LimitsTestExchange ask(String model, Integer maxTokens)
    {
        return new LimitsTestExchange(model, PROMPT, maxTokens);
    }

    private static Identity key(String id, String team, Map<String, String> metadata)
    {
        return new Identity(id, team, metadata);
    }

    private Reply pass(ProxyBinding binding, LimitsTestExchange exchange)
    {
        return binding.handle(exchange, context.exit("next")).toCompletableFuture().join();
    }

    private static GatewayException refusal(CompletionStage<Reply> stage)
    {
        try
        {
            stage.toCompletableFuture().join();
        }
        catch (CompletionException e)
        {
            return GatewayException.of(e);
        }
        throw new AssertionError("expected a refusal");
    }

    private JsonNode admin() throws Exception
    {
        AdminResponse response = context.adminRoutes().get("GET /limits")
            .handle(new AdminRequest("GET", "/limits", null, null, new byte[0])).toCompletableFuture().join();
        assertThat(response.status()).isEqualTo(200);
        return Json.MAPPER.readTree(new String(response.body(), StandardCharsets.UTF_8));
    }

    private static JsonNode scope(JsonNode snapshot, String scope)
    {
        for (JsonNode s : snapshot.get("scopes"))
        {
            if (s.get("scope").asText().equals(scope))
                return s;
        }
        throw new AssertionError("no scope " + scope + " in " + snapshot);
    }

    @Test
    void requestRatesAndConcurrencyAloneNeverDecodeTheRequest()
    {
        ProxyBinding limits = binding("""
            {"key": {"rpm": 5}, "teams": {"a": {"max_concurrent": 2}}, "models": {"gpt-*": {"rpm": 100}}}""");
        LimitsTestExchange exchange = ask("gpt-4o", null).as(key("k1", "a", Map.of()));

        pass(limits, exchange);

        assertThat(exchange.decodes()).isZero();
        assertThat(exchange.listeners()).isEqualTo(1);
        assertThat(context.recorder("next").received()).hasSize(1);
    }

    @Test
    void anExchangeNoScopeLimitsPassesWithoutAHook()
    {
        ProxyBinding limits = binding("""
            {"teams": {"a": {"rpm": 1}}, "models": {"claude-*": {"rpm": 1}}}""");
        LimitsTestExchange exchange = ask("gpt-4o", null).as(key("k1", "b", Map.of()));

        pass(limits, exchange);
        pass(limits, ask("gpt-4o", null));

        assertThat(exchange.listeners()).isZero();
        assertThat(exchange.decodes()).isZero();
    }

    @Test
    void aTokenRateReservesTheEstimatedInputPlusMaxTokensAndRefusesWhatDoesNotFit()
    {
        ProxyBinding limits = binding("""
            {"key": {"rpm": 10, "tpm": 1000}}""");
        LimitsTestExchange first = ask("gpt-4o", 500).as(key("k1", null, Map.of()));
        pass(limits, first);
        assertThat(first.decodes()).isEqualTo(1);

        GatewayException e = refusal(limits.handle(ask("gpt-4o", 500).as(key("k1", null, Map.of())), context.exit("next")));
        assertThat(e.kind()).isEqualTo(ErrorKind.RATE_LIMITED);
        assertThat(e.status()).isEqualTo(429);
        assertThat(e.code()).isEqualTo("rate_limit_exceeded");
        assertThat(e.getMessage()).startsWith("rate limit reached for key k1: 1000 tokens per minute, and this request"
            + " reserves " + (PROMPT_TOKENS + 500));
        assertThat(e.headers().get("x-ratelimit-limit-tokens")).isEqualTo("1000");
        assertThat(e.headers().get("x-ratelimit-remaining-tokens")).isEqualTo(Long.toString(1000 - PROMPT_TOKENS - 500));
        assertThat(e.headers().get("x-ratelimit-limit-requests")).isEqualTo("10");
        // The refused request is not counted: one of ten taken.
        assertThat(e.headers().get("x-ratelimit-remaining-requests")).isEqualTo("9");
        assertThat(e.headers().get("x-ratelimit-reset-requests")).isEqualTo("6s");
        assertThat(Long.parseLong(e.headers().get("retry-after"))).isBetween(1L, 60L);
        assertThat(context.recorder("next").received()).hasSize(1);
    }

    @Test
    void withoutMaxTokensTheDefaultIsReserved()
    {
        ProxyBinding limits = binding("""
            {"models": {"*": {"tpm": 1000}}, "default_max_tokens": 800}""");
        pass(limits, ask("m", null));
        GatewayException e = refusal(limits.handle(ask("m", 1), context.exit("next")));
        assertThat(e.headers().get("x-ratelimit-remaining-tokens")).isEqualTo(Long.toString(1000 - PROMPT_TOKENS - 800));
    }

    @Test
    void aRequestLargerThanTheTokenRateIsRefusedWithoutRetryAfter()
    {
        ProxyBinding limits = binding("""
            {"anonymous": {"tpm": 500}}""");
        GatewayException e = refusal(limits.handle(ask("m", 1000), context.exit("next")));
        assertThat(e.status()).isEqualTo(429);
        assertThat(e.getMessage()).isEqualTo("request too large for anonymous callers: it reserves " + (PROMPT_TOKENS + 1000)
            + " tokens (its estimated input and max tokens), more than the limit of 500 tokens per minute; lower max"
            + " tokens or shorten the prompt");
        assertThat(e.headers().get("retry-after")).isNull();
    }

    @Test
    void aKeysMetadataOverridesTheKeyDefaultsFieldByField()
    {
        ProxyBinding limits = binding("""
            {"key": {"rpm": 100, "max_concurrent": 1}}""");
        Identity special = key("k-special", null, Map.of("limit.rpm", "2", "limit.max_concurrent", "0"));
        pass(limits, ask("m", null).as(special));
        pass(limits, ask("m", null).as(special));
        GatewayException e = refusal(limits.handle(ask("m", null).as(special), context.exit("next")));
        assertThat(e.getMessage()).isEqualTo("rate limit reached for key k-special: 2 requests per minute; retry in 30s");
        assertThat(e.headers().get("retry-after")).isEqualTo("30");
        assertThat(e.headers().get("x-ratelimit-limit-requests")).isEqualTo("2");
        assertThat(e.headers().get("x-ratelimit-remaining-requests")).isEqualTo("0");
        assertThat(e.headers().get("x-ratelimit-reset-requests")).isEqualTo("1m0s");

        // The default key keeps max_concurrent 1, which the override removed for k-special: its first is in flight.
        Identity plain = key("k-plain", null, Map.of("owner", "someone"));
        pass(limits, ask("m", null).as(plain));
        GatewayException busy = refusal(limits.handle(ask("m", null).as(plain), context.exit("next")));
        assertThat(busy.getMessage()).isEqualTo("concurrency limit reached for key k-plain: 1 requests in flight; retry"
            + " when one completes");
        assertThat(busy.headers().get("retry-after")).isEqualTo("1");
    }

    @Test
    void aKeyBudgetFromMetadataNeedsAPeriodAndAnUnparsableOverrideIs500NamingTheKey()
    {
        ProxyBinding limits = binding("""
            {"key": {"rpm": 100}, "prices": {"*": {"input": 1, "output": 1}}}""");
        GatewayException e = refusal(limits.handle(ask("m", null).as(key("k9", null, Map.of("limit.tpm", "lots"))),
            context.exit("next")));
        assertThat(e.status()).isEqualTo(500);
        assertThat(e.getMessage()).isEqualTo("limits of key k9 are misconfigured: metadata limit.tpm: value: \"lots\""
            + " (expected: a whole number, 0 for no limit)");
        GatewayException noPeriod = refusal(limits.handle(ask("m", null).as(key("k8", null, Map.of("budget.amount", "5"))),
            context.exit("next")));
        assertThat(noPeriod.getMessage()).startsWith("limits of key k8 are misconfigured: metadata budget.period: must be set");

        // Both given: a budget of 0.0005 for the day; a request reserving 104 + 400 tokens at 1 per million is 0.000504.
        Identity tight = key("k7", null, Map.of("budget.amount", "0.0005", "budget.period", "1d"));
        GatewayException over = refusal(limits.handle(ask("m", 400).as(tight), context.exit("next")));
        assertThat(over.code()).isEqualTo("insufficient_quota");
        pass(limits, ask("m", 300).as(tight));
    }

    @Test
    void teamsAreLimitedByNameOrByTheStarEntry()
    {
        ProxyBinding limits = binding("""
            {"teams": {"research": {"rpm": 1}, "*": {"rpm": 2}}}""");
        pass(limits, ask("m", null).as(key("k1", "research", Map.of())));
        // Another key of the same team shares the team's counter.
        GatewayException e = refusal(limits.handle(ask("m", null).as(key("k2", "research", Map.of())), context.exit("next")));
        assertThat(e.getMessage()).startsWith("rate limit reached for team research: 1 requests per minute");

        pass(limits, ask("m", null).as(key("k3", "ops", Map.of())));
        pass(limits, ask("m", null).as(key("k4", "ops", Map.of())));
        assertThat(refusal(limits.handle(ask("m", null).as(key("k3", "ops", Map.of())), context.exit("next"))).getMessage())
            .startsWith("rate limit reached for team ops: 2 requests per minute");
        // A key without a team is not limited by teams.
        pass(limits, ask("m", null).as(key("k5", null, Map.of())));
        pass(limits, ask("m", null).as(key("k5", null, Map.of())));
        pass(limits, ask("m", null).as(key("k5", null, Map.of())));
    }

    @Test
    void modelsTakeTheFirstMatchingGlobWhoseCounterAllItsModelsShare()
    {
        ProxyBinding limits = binding("""
            {"models": {"gpt-4o-mini": {"rpm": 3}, "gpt-4o*": {"rpm": 1}}}""");
        pass(limits, ask("gpt-4o", null));
        assertThat(refusal(limits.handle(ask("gpt-4o-2024-08-06", null), context.exit("next"))).getMessage())
            .startsWith("rate limit reached for model gpt-4o*: 1 requests per minute");
        pass(limits, ask("gpt-4o-mini", null));
        pass(limits, ask("gpt-4o-mini", null));
        pass(limits, ask("claude-x", null));
    }

    @Test
    void exchangesWithoutIdentityPassUnlessAnonymousIsConfiguredThenShareOneScope()
    {
        ProxyBinding open = binding("""
            {"key": {"rpm": 1}}""");
        for (int i = 0; i < 5; i++)
            pass(open, ask("m", null));

        ProxyBinding limited = binding("""
            {"key": {"rpm": 1}, "anonymous": {"rpm": 2}}""");
        pass(limited, ask("m", null));
        pass(limited, ask("m", null));
        GatewayException e = refusal(limited.handle(ask("m", null), context.exit("next")));
        assertThat(e.getMessage()).startsWith("rate limit reached for anonymous callers: 2 requests per minute");
        // Identified callers are not in the anonymous scope.
        pass(limited, ask("m", null).as(key("k1", null, Map.of())));
    }

    @Test
    void anExhaustedBudgetIs429InsufficientQuotaWithRetryAfterUntilTheReset()
    {
        ProxyBinding limits = binding("""
            {"teams": {"*": {"budget": {"amount": 0.01, "period": "1h"}}},
             "prices": {"gpt-4o*": {"input": 2.50, "output": 10.00, "cached_input": 1.25}}}""");
        Identity who = key("k1", "a", Map.of());
        // 104 input at 2.50 + 900 output at 10.00 per million: 0.00926 of 0.01.
        pass(limits, ask("gpt-4o", 900).as(who));
        GatewayException e = refusal(limits.handle(ask("gpt-4o", 900).as(who), context.exit("next")));
        assertThat(e.kind()).isEqualTo(ErrorKind.RATE_LIMITED);
        assertThat(e.status()).isEqualTo(429);
        assertThat(e.code()).isEqualTo("insufficient_quota");
        assertThat(e.getMessage()).startsWith("budget exhausted for team a: 0.01 per 1h is spent or reserved by requests in"
            + " flight; it resets in ");
        assertThat(Long.parseLong(e.headers().get("retry-after"))).isBetween(1L, 3600L);
        assertThat(e.headers().get("x-ratelimit-limit-requests")).isNull();
    }

    @Test
    void aBudgetedExchangeForAnUnpricedModelIsRefusedUnlessUnpricedIsFree()
    {
        String options = """
            {"anonymous": {"budget": {"amount": 1, "period": "month"}}, "prices": {"gpt-*": {"input": 1, "output": 1}}%s}""";
        GatewayException e = refusal(binding(options.formatted("")).handle(ask("claude-x", null), context.exit("next")));
        assertThat(e.status()).isEqualTo(403);
        assertThat(e.kind()).isEqualTo(ErrorKind.PERMISSION);
        assertThat(e.code()).isEqualTo("model_not_priced");
        assertThat(e.getMessage()).isEqualTo("model: claude-x has no price, and a budget applies to this request (expected:"
            + " a model the gateway's price table lists)");
        assertThat(context.recorder("next").received()).isEmpty();

        pass(binding(options.formatted(", \"unpriced\": \"free\"")), ask("claude-x", null));
    }

    @Test
    void settlementChargesTheUsageWithCachedInputAtTheCachedPrice() throws Exception
    {
        ProxyBinding limits = binding("""
            {"anonymous": {"tpm": 100000, "budget": {"amount": 1, "period": "1d"}},
             "prices": {"*": {"input": 2.00, "output": 10.00, "cached_input": 1.00}}}""", false);
        LimitsTestExchange exchange = ask("m", 1000);
        pass(limits, exchange);
        JsonNode reserved = scope(admin(), "anonymous");
        // 104 × 2.00 + 1000 × 10.00 per million.
        assertThat(reserved.at("/budget/reserved").decimalValue()).isEqualByComparingTo("0.010208");
        // The token rate refills as the real clock runs: only bounds from below hold (exact counts: MemoryLimitStoreTest).
        assertThat(reserved.at("/tokens/remaining").asLong()).isBetween(100000 - PROMPT_TOKENS - 1000, 100000L);
        assertThat(reserved.get("in_flight").asInt()).isEqualTo(1);

        // 1,000 input of which 400 cached, 100 output: 600 × 2 + 400 × 1 + 100 × 10 = 2,600 per million.
        exchange.complete(Completion.Outcome.COMPLETED, 200, new Usage(1000, 100, 400, 0, 0), 5_000);
        JsonNode settled = scope(admin(), "anonymous");
        assertThat(settled.at("/budget/spent").decimalValue()).isEqualByComparingTo("0.0026");
        assertThat(settled.at("/budget/reserved").decimalValue()).isEqualByComparingTo("0");
        assertThat(settled.at("/budget/remaining").decimalValue()).isEqualByComparingTo("0.9974");
        assertThat(settled.at("/tokens/remaining").asLong()).isGreaterThanOrEqualTo(100000 - 1100);
        assertThat(settled.get("in_flight").asInt()).isZero();
        assertThat(settled.at("/budget/period").asText()).isEqualTo("1d");
        assertThat(settled.at("/budget/resets_at").asText()).endsWith("T00:00:00Z");
        // The same cost, in the table's currency taken as US dollars, for the request log.
        assertThat(exchange.attribute(Attributes.COST_USD)).isInstanceOfSatisfying(Double.class,
            cost -> assertThat(cost).isCloseTo(0.0026, org.assertj.core.data.Offset.offset(1e-12)));
    }

    @Test
    void aPricedExchangeGetsItsCostFromTheUsageWhetherOrNotAScopeLimitsIt()
    {
        ProxyBinding limits = binding("""
            {"teams": {"a": {"rpm": 100}}, "prices": {"gpt-*": {"input": 2.00, "output": 10.00, "cached_input": 1.00}}}""",
            false);
        // No scope: the key's team is not limited. 1,000 input (400 cached), 100 output: 2,600 per million.
        LimitsTestExchange unlimited = ask("gpt-4o", null).as(key("k1", "b", Map.of()));
        pass(limits, unlimited);
        assertThat(unlimited.listeners()).as("a pricing hook only").isEqualTo(1);
        assertThat(unlimited.decodes()).isZero();
        unlimited.complete(Completion.Outcome.COMPLETED, 200, new Usage(1000, 100, 400, 0, 0), 500);
        assertThat((Double)unlimited.attribute(Attributes.COST_USD))
            .isCloseTo(0.0026, org.assertj.core.data.Offset.offset(1e-12));

        // A request rate only: settled without a budget, priced all the same.
        LimitsTestExchange limited = ask("gpt-4o", null).as(key("k2", "a", Map.of()));
        pass(limits, limited);
        limited.complete(Completion.Outcome.COMPLETED, 200, new Usage(0, 1_000_000, 0, 0, 0), 500);
        assertThat((Double)limited.attribute(Attributes.COST_USD)).isCloseTo(10.0, org.assertj.core.data.Offset.offset(1e-9));

        // Without usage the cost is unknown, and a model the table does not list has none.
        LimitsTestExchange gone = ask("gpt-4o", null).as(key("k2", "a", Map.of()));
        pass(limits, gone);
        gone.complete(Completion.Outcome.CLIENT_GONE, 200, null, 500);
        assertThat(gone.attribute(Attributes.COST_USD)).isNull();
        LimitsTestExchange unlisted = ask("claude-3", null).as(key("k1", "b", Map.of()));
        pass(limits, unlisted);
        assertThat(unlisted.listeners()).isZero();
        LimitsTestExchange unlistedLimited = ask("claude-3", null).as(key("k2", "a", Map.of()));
        pass(limits, unlistedLimited);
        unlistedLimited.complete(Completion.Outcome.COMPLETED, 200, new Usage(10, 10, 0, 0, 0), 500);
        assertThat(unlistedLimited.attribute(Attributes.COST_USD)).isNull();
    }

    @Test
    void withoutUsageACancelledBrokenOrUnmeteredAnswerSettlesTheEstimatedInputAndTheRelayedOutputCapped() throws Exception
    {
        ProxyBinding limits = binding("""
            {"anonymous": {"budget": {"amount": 1, "period": "1d"}}, "prices": {"*": {"input": 1.00, "output": 1.00}}}""",
            false);
        LimitsTestExchange partial = ask("m", 1000);
        pass(limits, partial);
        // 2,000 bytes relayed: 500 tokens of output estimated, plus the 104 estimated input.
        partial.complete(Completion.Outcome.CLIENT_GONE, 200, null, 2_000);
        assertThat(scope(admin(), "anonymous").at("/budget/spent").decimalValue()).isEqualByComparingTo("0.000604");

        LimitsTestExchange capped = ask("m", 100);
        pass(limits, capped);
        capped.complete(Completion.Outcome.CLIENT_GONE, 200, null, 1_000_000);
        // Capped at the 100 output tokens reserved.
        assertThat(scope(admin(), "anonymous").at("/budget/spent").decimalValue()).isEqualByComparingTo("0.000808");

        LimitsTestExchange broken = ask("m", 100);
        pass(limits, broken);
        broken.complete(Completion.Outcome.FAILED, 200, null, 40);
        assertThat(scope(admin(), "anonymous").at("/budget/spent").decimalValue()).isEqualByComparingTo("0.000922");

        // A success whose usage the gateway did not learn is charged the same way, never released for free.
        LimitsTestExchange unknown = ask("m", 100);
        pass(limits, unknown);
        unknown.complete(Completion.Outcome.COMPLETED, 200, null, 200);
        assertThat(scope(admin(), "anonymous").at("/budget/spent").decimalValue()).isEqualByComparingTo("0.001076");
    }

    @Test
    void anExchangeThatFailedWithoutUsageReleasesItsReservation() throws Exception
    {
        ProxyBinding limits = binding("""
            {"anonymous": {"max_concurrent": 1, "budget": {"amount": 1, "period": "1d"}},
             "prices": {"*": {"input": 1.00, "output": 1.00}}}""", false);
        LimitsTestExchange failed = ask("m", 1000);
        pass(limits, failed);
        assertThat(refusal(limits.handle(ask("m", 1), context.exit("next"))).getMessage())
            .startsWith("concurrency limit reached for anonymous callers");
        failed.complete(Completion.Outcome.COMPLETED, 502, null, 120);
        JsonNode after = scope(admin(), "anonymous");
        assertThat(after.at("/budget/spent").decimalValue()).isEqualByComparingTo("0");
        assertThat(after.at("/budget/reserved").decimalValue()).isEqualByComparingTo("0");
        assertThat(after.get("in_flight").asInt()).isZero();
        pass(limits, ask("m", 1));
    }

    @Test
    void theBindingRegistersItsAdminRouteAndEvictionUnlessCheckOnlyAndCloseCancelsIt()
    {
        String options = """
            {"key": {"rpm": 1}, "evict_after": "4m"}""";
        binding(options, true).close();
        assertThat(context.adminRoutes()).isEmpty();
        assertThat(context.scheduledTasks()).isEmpty();

        ProxyBinding limits = binding(options, false);
        assertThat(context.adminRoutes()).containsOnlyKeys("GET /limits");
        assertThat(context.scheduledTasks()).singleElement().satisfies(t ->
        {
            assertThat(t.delay()).hasMinutes(2);
            assertThat(t.cancelled()).isFalse();
        });
        context.scheduledTasks().get(0).runnable().run();
        limits.close();
        assertThat(context.scheduledTasks().get(0).cancelled()).isTrue();
    }

    @Test
    void optionsAreCheckedStrictlyWithTheirPath()
    {
        assertThatThrownBy(() -> binding("""
            {"teams": {"a": {"rpmm": 1}}}"""))
            .isInstanceOf(ConfigException.class)
            .hasMessageContaining("bindings.limits.options.teams.a.rpmm: unknown key"
                + " (expected one of: budget, max_concurrent, rpm, tpm)");
        assertThatThrownBy(() -> binding("""
            {"key": {"budget": {"amount": 5}}}"""))
            .isInstanceOf(ConfigException.class)
            .hasMessageContaining("bindings.limits.options.key.budget.period: must be set");
        assertThatThrownBy(() -> binding("""
            {"key": {"budget": {"amount": 5, "period": "1w"}}}"""))
            .isInstanceOf(ConfigException.class)
            .hasMessageContaining("value: \"1w\" (expected: a period such as 12h, 1d, 30d or month)");
        assertThatThrownBy(() -> binding("""
            {"unpriced": "maybe"}"""))
            .isInstanceOf(ConfigException.class)
            .hasMessageContaining("bindings.limits.options.unpriced: value: \"maybe\" (expected: refuse or free)");
        assertThatThrownBy(() -> binding("""
            {"models": {"gpt-*": {}}}"""))
            .isInstanceOf(ConfigException.class)
            .hasMessageContaining("bindings.limits.options.models.gpt-*: no limit");
        assertThatThrownBy(() -> binding("""
            {"key": {"rpm": 0}}"""))
            .isInstanceOf(ConfigException.class)
            .hasMessageContaining("bindings.limits.options.key.rpm: value: 0 (expected: at least 1)");
    }

    @Test
    void resetsAreWrittenAsOpenAiWritesThem()
    {
        assertThat(LimitsBinding.goDuration(0)).isEqualTo("0s");
        assertThat(LimitsBinding.goDuration(19_500_000)).isEqualTo("20ms");
        assertThat(LimitsBinding.goDuration(6_000_000_000L)).isEqualTo("6s");
        assertThat(LimitsBinding.goDuration(61_200_000_000L)).isEqualTo("1m2s");
        assertThat(LimitsBinding.goDuration(3_605_000_000_000L)).isEqualTo("1h0m5s");
    }
}
