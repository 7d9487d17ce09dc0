package dev.sluice.plugin.limits;

import com.fasterxml.jackson.databind.JsonNode;
import dev.sluice.api.ErrorKind;
import dev.sluice.api.GatewayException;
import dev.sluice.api.admin.AdminRoutes;
import dev.sluice.api.admin.AdminRoutes.AdminRequest;
import dev.sluice.api.admin.AdminRoutes.AdminResponse;
import dev.sluice.api.binding.BindingConfig;
import dev.sluice.api.binding.BindingConfig.BindingKind;
import dev.sluice.api.binding.BindingContext;
import dev.sluice.api.binding.ProxyBinding;
import dev.sluice.api.config.ConfigException;
import dev.sluice.api.exchange.Completion;
import dev.sluice.api.exchange.Exchange.Identity;
import dev.sluice.api.exchange.Reply;
import dev.sluice.api.model.Usage;
import dev.sluice.api.testing.TestBindingContext;
import dev.sluice.support.json.Json;
import dev.sluice.support.redis.RedisOptions;
import dev.sluice.support.redis.SharedRedis;
import dev.sluice.support.testing.PoolBindingContext;
import dev.sluice.support.testing.RedisServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@link RedisLimitStore} against a real redis-server: two stores on one Redis stand for two replicas. Atomicity over
 * scopes, GCRA on the server's clock, leases that expire unless renewed, budgets with their windows computed by the
 * script, and the binding's fail-open and fail-closed behaviour when Redis is away.
 */
class RedisLimitStoreTest
{
    private RedisServer server;
    private final List<AutoCloseable> opened = new ArrayList<>();

    @BeforeEach
    void start() throws Exception
    {
        server = RedisServer.started();
    }

    @AfterEach
    void stop() throws Exception
    {
        // Last opened, first closed: bindings and connections before the pools they use.
        for (int i = opened.size() - 1; i >= 0; i--)
            opened.get(i).close();
        server.close();
    }

    /** @return a context with {@code test}'s exits and admin routes, and a real executor and scheduler */
    private PoolBindingContext live(TestBindingContext test)
    {
        PoolBindingContext context = new PoolBindingContext(test);
        opened.add(context);
        return context;
    }

    private RedisLimitStore store(Duration lease) throws Exception
    {
        return store(lease, RedisLimitStore.SETTLE_DELAY);
    }

    private RedisLimitStore store(Duration lease, Duration settleDelay) throws Exception
    {
        return store(lease, settleDelay, Duration.ofSeconds(2));
    }

    private RedisLimitStore store(Duration lease, Duration settleDelay, Duration timeout) throws Exception
    {
        PoolBindingContext context = live(new TestBindingContext());
        SharedRedis redis = context.openRedis(new RedisOptions(server.url(), "t:", timeout, null));
        opened.add(redis);
        return new RedisLimitStore(redis, lease, TimeUnit.MINUTES.toNanos(10), context.scheduler(), settleDelay);
    }


    private static <T> T await(CompletionStage<T> stage) throws Exception
    {
        return stage.toCompletableFuture().get(20, TimeUnit.SECONDS);
    }

    private static LimitStore.Demand[] demands(Object... scopeAndLimits)
    {
        LimitStore.Demand[] d = new LimitStore.Demand[scopeAndLimits.length / 2];
        for (int i = 0; i < d.length; i++)
            d[i] = new LimitStore.Demand((String) scopeAndLimits[2 * i], (Limits) scopeAndLimits[2 * i + 1]);
        return d;
    }

    /** @return the scripts Redis ran so far (EVALSHA and EVAL calls, less those that failed: a NOSCRIPT before EVAL) */
    private long scriptCalls() throws Exception
    {
        String stats = (String) server.command("INFO", "commandstats");
        long calls = 0;
        for (String line : stats.split("\r\n"))
        {
            if (line.startsWith("cmdstat_evalsha:") || line.startsWith("cmdstat_eval:"))
                calls += Long.parseLong(line.replaceAll("^[^:]+:calls=([0-9]+),.*", "$1"))
                    - Long.parseLong(line.replaceAll(".*,failed_calls=([0-9]+).*", "$1"));
        }
        return calls;
    }

    private static LimitStore.ScopeSnapshot scope(RedisLimitStore store, String name) throws Exception
    {
        return await(store.snapshot()).stream().filter(s -> s.scope().equals(name)).findFirst().orElseThrow();
    }

    @Test
    void aRequestRateAdmitsExactlyNAcrossTwoReplicas() throws Exception
    {
        RedisLimitStore a = store(Duration.ofSeconds(30));
        RedisLimitStore b = store(Duration.ofSeconds(30));
        LimitStore.Demand[] d = demands("key:k", new Limits(5, 0, 0, 0, null));
        List<CompletionStage<LimitStore.Admission>> all = new ArrayList<>();
        for (int i = 0; i < 40; i++)
            all.add((i % 2 == 0 ? a : b).reserve(d, 0, 0));
        int admitted = 0;
        List<LimitStore.Refusal> refusals = new ArrayList<>();
        for (CompletionStage<LimitStore.Admission> s : all)
        {
            LimitStore.Admission admission = await(s);
            if (admission instanceof LimitStore.Refusal r)
                refusals.add(r);
            else
                admitted++;
        }
        assertThat(admitted).isEqualTo(5);
        // Request rates alone: the script's one call, nothing settled and nothing leased.
        long calls = scriptCalls();
        for (CompletionStage<LimitStore.Admission> s : all)
        {
            if (await(s) instanceof LimitStore.Reservation r)
                a.settle(r, 0, 0);
        }
        assertThat(scriptCalls()).isEqualTo(calls);
        assertThat(a.liveLeases() + b.liveLeases()).isZero();
        assertThat(refusals).hasSize(35).allSatisfy(r ->
        {
            assertThat(r.reason()).isEqualTo(LimitStore.Reason.REQUESTS);
            assertThat(r.demand()).isZero();
            // One request every 12 s.
            assertThat(r.retryAfterNanos()).isBetween(1L, TimeUnit.SECONDS.toNanos(12));
            assertThat(r.requests().limit()).isEqualTo(5);
            assertThat(r.requests().remaining()).isZero();
            assertThat(r.requests().resetNanos()).isBetween(TimeUnit.SECONDS.toNanos(48), TimeUnit.SECONDS.toNanos(60));
            assertThat(r.tokens()).isNull();
        });
    }

    @Test
    void aRefusalByOneScopeTakesNothingFromTheOthers() throws Exception
    {
        RedisLimitStore store = store(Duration.ofSeconds(30));
        LimitStore.Demand[] d = demands("key:k", new Limits(10, 1000, 0, 0, null), "team:t", new Limits(0, 0, 1, 0, null));
        LimitStore.Admission first = await(store.reserve(d, 100, 0));
        assertThat(first).isInstanceOf(LimitStore.Reservation.class);
        LimitStore.Admission second = await(store.reserve(d, 100, 0));
        assertThat(second).isInstanceOfSatisfying(LimitStore.Refusal.class, r ->
        {
            assertThat(r.demand()).isEqualTo(1);
            assertThat(r.reason()).isEqualTo(LimitStore.Reason.CONCURRENCY);
        });
        LimitStore.ScopeSnapshot key = scope(store, "key:k");
        // The rates refill as the server's clock runs: at least what is left right after.
        assertThat(key.requests().remaining()).isBetween(9L, 10L);
        assertThat(key.tokens().remaining()).isBetween(900L, 1000L);
        assertThat(scope(store, "team:t").inFlight()).isEqualTo(1);

        store.settle((LimitStore.Reservation) first, 50, 0);
        awaitTrue(() -> scope(store, "team:t").inFlight() == 0);
        // 50 tokens used of the 100 reserved: at least 950 of 1000 left.
        assertThat(scope(store, "key:k").tokens().remaining()).isBetween(950L, 1000L);
        assertThat(await(store.reserve(d, 100, 0))).isInstanceOf(LimitStore.Reservation.class);
    }

    @Test
    void tokenRatesRefuseWhatNeverFitsAndWhatDoesNotFitNow() throws Exception
    {
        RedisLimitStore store = store(Duration.ofSeconds(30));
        LimitStore.Demand[] d = demands("model:m", new Limits(0, 1000, 0, 0, null));
        assertThat(await(store.reserve(d, 1001, 0))).isInstanceOfSatisfying(LimitStore.Refusal.class,
            r -> assertThat(r.reason()).isEqualTo(LimitStore.Reason.TOKENS_TOO_LARGE));
        assertThat(await(store.reserve(d, 800, 0))).isInstanceOf(LimitStore.Reservation.class);
        assertThat(await(store.reserve(d, 300, 0))).isInstanceOfSatisfying(LimitStore.Refusal.class, r ->
        {
            assertThat(r.reason()).isEqualTo(LimitStore.Reason.TOKENS);
            assertThat(r.tokens().remaining()).isBetween(200L, 299L);
            // 100 tokens at 1000 per minute: 6 s.
            assertThat(r.retryAfterNanos()).isBetween(TimeUnit.SECONDS.toNanos(5), TimeUnit.SECONDS.toNanos(6));
        });
    }

    @Test
    void aBudgetIsReservedSettledAndPersistsPastTheWindowInTheScriptsOwnCalendar() throws Exception
    {
        RedisLimitStore store = store(Duration.ofSeconds(30));
        BudgetPeriod month = BudgetPeriod.parse("month");
        LimitStore.Demand[] d = demands("team:b", new Limits(0, 0, 0, 100, month));
        LimitStore.Admission one = await(store.reserve(d, 0, 40));
        LimitStore.Admission two = await(store.reserve(d, 0, 40));
        assertThat(one).isInstanceOf(LimitStore.Reservation.class);
        assertThat(two).isInstanceOf(LimitStore.Reservation.class);
        long now = System.currentTimeMillis();
        long end = month.windowEnd(month.windowStart(now));
        assertThat(await(store.reserve(d, 0, 40))).isInstanceOfSatisfying(LimitStore.Refusal.class, r ->
        {
            assertThat(r.reason()).isEqualTo(LimitStore.Reason.BUDGET);
            assertThat(TimeUnit.NANOSECONDS.toMillis(r.retryAfterNanos())).isBetween(end - now - 5_000, end - now + 5_000);
        });
        store.settle((LimitStore.Reservation) one, 0, 10);
        awaitTrue(() -> scope(store, "team:b").spent() == 10);
        LimitStore.ScopeSnapshot b = scope(store, "team:b");
        assertThat(b.reserved()).isEqualTo(40);
        assertThat(b.windowEndMillis()).isEqualTo(end);
        // The script computed the calendar month in UTC as BudgetPeriod does, and the spend outlives the window.
        assertThat(Long.parseLong((String) server.command("HGET", "t:limits:team:b", "w"))).isEqualTo(month.windowStart(now));
        assertThat((Long) server.command("PTTL", "t:limits:team:b")).isGreaterThan(end - System.currentTimeMillis());
        assertThat(await(store.reserve(d, 0, 40))).isInstanceOf(LimitStore.Reservation.class);
    }

    @Test
    void fixedWindowsOfTheScriptMatchBudgetPeriods() throws Exception
    {
        RedisLimitStore store = store(Duration.ofSeconds(30));
        for (String p : List.of("1h", "12h", "1d", "7d", "30d"))
        {
            BudgetPeriod period = BudgetPeriod.parse(p);
            await(store.reserve(demands("team:" + p, new Limits(0, 0, 0, 1, period)), 0, 0));
            long w = Long.parseLong((String) server.command("HGET", "t:limits:team:" + p, "w"));
            assertThat(w).as(p).isEqualTo(period.windowStart(System.currentTimeMillis()));
        }
    }

    @Test
    void aLeaseNotRenewedExpiresAndGivesItsSlotAndReservationBack_aRenewedOneHolds() throws Exception
    {
        RedisLimitStore dead = store(Duration.ofSeconds(1));
        RedisLimitStore alive = store(Duration.ofSeconds(1));
        LimitStore.Demand[] d = demands("key:lease", new Limits(0, 0, 1, 100, BudgetPeriod.parse("1d")));
        assertThat(await(dead.reserve(d, 0, 60))).isInstanceOf(LimitStore.Reservation.class);
        assertThat(await(alive.reserve(d, 0, 60))).isInstanceOfSatisfying(LimitStore.Refusal.class,
            r -> assertThat(r.reason()).isEqualTo(LimitStore.Reason.CONCURRENCY));
        Thread.sleep(1_300);
        // The dead replica never renewed nor settled: its slot and its 60 came back.
        LimitStore.Admission taken = await(alive.reserve(d, 0, 60));
        assertThat(taken).isInstanceOf(LimitStore.Reservation.class);
        assertThat(alive.liveLeases()).isEqualTo(1);
        for (int i = 0; i < 6; i++)
        {
            Thread.sleep(300);
            alive.renew();
        }
        // Renewed: held past two leases.
        assertThat(await(dead.reserve(d, 0, 0))).isInstanceOf(LimitStore.Refusal.class);
        assertThat(scope(alive, "key:lease").reserved()).isEqualTo(60);
        long calls = scriptCalls();
        alive.settle((LimitStore.Reservation) taken, 0, 0);
        assertThat(alive.liveLeases()).isZero();
        awaitTrue(() -> scriptCalls() == calls + 1);
        awaitTrue(() -> scope(alive, "key:lease").inFlight() == 0);
        assertThat(scope(alive, "key:lease").reserved()).isZero();
    }

    @Test
    void aSettleRidesTheNextReserve_whoseScriptCountsWhatItFreed() throws Exception
    {
        // A delay that never passes in this test: only a reserve (or a flush) can carry the settle.
        RedisLimitStore store = store(Duration.ofSeconds(30), Duration.ofHours(1));
        LimitStore.Demand[] d = demands("key:ride", new Limits(0, 1000, 1, 100, BudgetPeriod.parse("1d")));
        LimitStore.Admission first = await(store.reserve(d, 200, 10));
        assertThat(first).isInstanceOf(LimitStore.Reservation.class);
        store.settle((LimitStore.Reservation) first, 50, 7);
        assertThat(scope(store, "key:ride").inFlight()).as("not settled yet").isEqualTo(1);
        assertThat(scope(store, "key:ride").reserved()).isEqualTo(10);
        long calls = scriptCalls();

        // max_concurrent 1: admitted only because the settle ran first in the same script.
        LimitStore.Admission second = await(store.reserve(d, 0, 20));
        assertThat(second).isInstanceOf(LimitStore.Reservation.class);
        assertThat(scriptCalls()).as("one call for the settle and the reserve").isEqualTo(calls + 1);
        LimitStore.ScopeSnapshot scope = scope(store, "key:ride");
        assertThat(scope.inFlight()).isEqualTo(1);
        assertThat(scope.spent()).as("the used cost charged").isEqualTo(7);
        assertThat(scope.reserved()).as("the first reservation given back, the second's held").isEqualTo(20);
        // 50 tokens used of the 200 reserved: the token rate gave 150 back.
        assertThat(scope.tokens().remaining()).isBetween(950L, 1000L);

        // The second settles with a third reserve in another scope, then the third by a flush: each lease is its own.
        store.settle((LimitStore.Reservation) second, 0, 15);
        LimitStore.Admission third = await(store.reserve(demands("key:ride-other", new Limits(0, 0, 1, 0, null)), 0, 0));
        assertThat(scope(store, "key:ride").inFlight()).isZero();
        assertThat(scope(store, "key:ride").spent()).isEqualTo(22);
        assertThat(scope(store, "key:ride").reserved()).isZero();
        store.renew();
        store.settle((LimitStore.Reservation) third, 0, 0);
        store.flushSettles();
        awaitTrue(() -> scope(store, "key:ride-other").inFlight() == 0);
        assertThat(scope(store, "key:ride").spent()).isEqualTo(22);
    }

    @Test
    void settlesNoReserveCarriesGoInOneCallAfterTheDelay() throws Exception
    {
        RedisLimitStore store = store(Duration.ofSeconds(30), Duration.ofMillis(300));
        List<LimitStore.Reservation> held = new ArrayList<>();
        for (String s : List.of("a", "b", "c"))
            held.add((LimitStore.Reservation) await(store.reserve(demands("key:flush-" + s, new Limits(0, 0, 1, 0, null)), 0, 0)));
        long calls = scriptCalls();
        for (LimitStore.Reservation r : held)
            store.settle(r, 0, 0);
        awaitTrue(() -> scriptCalls() > calls);
        Thread.sleep(400);
        assertThat(scriptCalls()).as("one call settled all three").isEqualTo(calls + 1);
        for (String s : List.of("a", "b", "c"))
            assertThat(scope(store, "key:flush-" + s).inFlight()).isZero();
    }

    @Test
    void aSettleWhoseCallGotNoAnswerIsSentAgain_andCountedOnce() throws Exception
    {
        RedisLimitStore store = store(Duration.ofSeconds(30), Duration.ofHours(1), Duration.ofMillis(300));
        LimitStore.Demand[] d = demands("key:again", new Limits(0, 0, 1, 100, BudgetPeriod.parse("1d")));
        LimitStore.Reservation held = (LimitStore.Reservation) await(store.reserve(d, 0, 10));
        long calls = scriptCalls();
        server.pause();
        try
        {
            store.settle(held, 0, 7);
            // Sent, unanswered: the call fails after the timeout and its settle waits to be sent again.
            store.flushSettles();
            Thread.sleep(600);
        }
        finally
        {
            server.resume();
        }
        // Sent again a second after the failure: the slot and the reservation come back long before the lease's 30 s.
        // (Whether Redis also ran the first call once it could, the cost is charged once.)
        awaitTrue(() -> scope(store, "key:again").inFlight() == 0);
        assertThat(scriptCalls()).isGreaterThan(calls);
        LimitStore.ScopeSnapshot scope = scope(store, "key:again");
        assertThat(scope.inFlight()).isZero();
        assertThat(scope.reserved()).isZero();
        assertThat(scope.spent()).as("charged once").isEqualTo(7);
        assertThat(await(store.reserve(d, 0, 10))).as("the slot is free").isInstanceOf(LimitStore.Reservation.class);
    }

    @Test
    void aSettleSentAgainCountsOnlyWhereItsLeaseIsStillHeld() throws Exception
    {
        RedisLimitStore store = store(Duration.ofSeconds(30), Duration.ofHours(1));
        Limits limits = new Limits(0, 1000, 1, 100, BudgetPeriod.parse("1d"));
        // Its first call ran: sent again, it changes nothing.
        LimitStore.Reservation ran = (LimitStore.Reservation) await(store.reserve(demands("key:ran", limits), 200, 10));
        store.settle(ran, 50, 7);
        store.flushSettles();
        awaitTrue(() -> scope(store, "key:ran").inFlight() == 0);
        long tokensLeft = scope(store, "key:ran").tokens().remaining();
        long calls = scriptCalls();
        store.settle(ran, 50, 7, true);
        store.flushSettles();
        awaitTrue(() -> scriptCalls() == calls + 1);
        LimitStore.ScopeSnapshot once = scope(store, "key:ran");
        assertThat(once.spent()).isEqualTo(7);
        assertThat(once.reserved()).isZero();
        assertThat(once.tokens().remaining()).isBetween(tokensLeft - 1, tokensLeft + 1);
        // Its first call never ran: sent again, it settles.
        LimitStore.Reservation lost = (LimitStore.Reservation) await(store.reserve(demands("key:lost", limits), 0, 10));
        store.settle(lost, 0, 5, true);
        store.flushSettles();
        awaitTrue(() -> scope(store, "key:lost").inFlight() == 0);
        assertThat(scope(store, "key:lost").spent()).isEqualTo(5);
        assertThat(scope(store, "key:lost").reserved()).isZero();
    }

    @Test
    void closingFlushesTheSettlesStillWaiting() throws Exception
    {
        RedisLimitStore store = store(Duration.ofSeconds(30), Duration.ofHours(1));
        LimitStore.Demand[] d = demands("key:close", new Limits(0, 0, 1, 0, null));
        store.settle((LimitStore.Reservation) await(store.reserve(d, 0, 0)), 0, 0);
        assertThat(scope(store, "key:close").inFlight()).isEqualTo(1);
        store.flushSettles();
        awaitTrue(() -> scope(store, "key:close").inFlight() == 0);
    }

    @Test
    void storeOptionsAreValidatedWithTheirPath()
    {
        assertThatThrownBy(() -> binding("{\"key\": {\"rpm\": 1}, \"store\": {}}", new TestBindingContext("next")))
            .isInstanceOf(ConfigException.class).hasMessageContaining("store").hasMessageContaining("redis: must be set");
        assertThatThrownBy(() -> binding("{\"key\": {\"rpm\": 1}, \"store\": {\"redis\": {\"url\": \"redis://h:1\"},"
            + " \"on_unavailable\": \"maybe\"}}", new TestBindingContext("next")))
            .isInstanceOf(ConfigException.class).hasMessageContaining("on_unavailable: value: \"maybe\"");
        assertThatThrownBy(() -> binding("{\"key\": {\"rpm\": 1}, \"store\": {\"redis\": {\"url\": \"redis://h:1\"},"
            + " \"lease\": \"100ms\"}}", new TestBindingContext("next")))
            .isInstanceOf(ConfigException.class).hasMessageContaining("lease: value:");
        assertThatThrownBy(() -> binding("{\"key\": {\"rpm\": 1}, \"store\": {\"redis\": {\"url\": \"redis://h:1\","
            + " \"tiemout\": \"1s\"}}}", new TestBindingContext("next")))
            .isInstanceOf(ConfigException.class).hasMessageContaining("tiemout");
        // Check mode: valid, and nothing is opened.
        TestBindingContext check = new TestBindingContext("next").checkOnly(true);
        binding("{\"key\": {\"rpm\": 1}, \"store\": {\"redis\": {\"url\": \"redis://h:1\"}, \"on_unavailable\":"
            + " \"fail_closed\", \"lease\": \"2s\"}}", check);
        assertThat(check.scheduledTasks()).isEmpty();
    }

    @Test
    void aWarmupExchangeReachesRedisOnceChargingNothing_andPassesWhenRedisIsAway() throws Exception
    {
        TestBindingContext test = new TestBindingContext("next");
        ProxyBinding binding = binding("{\"key\": {\"rpm\": 1, \"max_concurrent\": 1}, \"store\": {\"redis\": {\"url\": \""
            + server.url() + "\", \"timeout\": \"200ms\"}, \"on_unavailable\": \"fail_closed\"}}", live(test));
        awaitTrue(() -> connected(binding));
        long calls = scriptCalls();
        for (int i = 0; i < 3; i++)
        {
            LimitsTestExchange warmup = ask("k-warm").asWarmup();
            await(binding.handle(warmup, test.exit("next")));
            assertThat(warmup.attribute(LimitsBinding.STORE_UNAVAILABLE)).isNull();
            assertThat(warmup.listeners()).as("nothing to settle").isZero();
        }
        assertThat(scriptCalls()).as("one call each").isEqualTo(calls + 3);
        // Charged nothing: the key's one request a minute and one slot are whole.
        LimitsTestExchange client = ask("k-warm");
        await(binding.handle(client, test.exit("next")));
        assertThat(client.attribute(LimitsBinding.STORE_UNAVAILABLE)).isNull();

        server.pause();
        try
        {
            // Redis away: a warm-up exchange still passes (after the wait), where a client's is refused.
            await(binding.handle(ask("k-warm-2").asWarmup(), test.exit("next")));
            assertThat(refusal(binding.handle(ask("k-warm-3"), test.exit("next"))).status()).isEqualTo(503);
        }
        finally
        {
            server.resume();
        }
        client.complete(Completion.Outcome.COMPLETED, 200, new Usage(1, 1, 0, 0, 0), 10);
    }

    @Test
    void theBindingAdmitsThroughRedis_andWhenRedisIsAwayFailsOpenOrClosedThenRecovers() throws Exception
    {
        String store = "\"store\": {\"redis\": {\"url\": \"" + server.url() + "\", \"timeout\": \"200ms\"}, \"on_unavailable\": ";
        TestBindingContext openTest = new TestBindingContext("next");
        ProxyBinding open = binding("{\"key\": {\"rpm\": 2}, " + store + "\"fail_open\"}}", live(openTest));
        TestBindingContext closedTest = new TestBindingContext("next").bindingName("closed");
        ProxyBinding closed = binding("{\"key\": {\"rpm\": 100}, " + store + "\"fail_closed\"}, \"admin_path\": \"/l2\"}",
            live(closedTest));
        awaitTrue(() -> connected(open) && connected(closed));

        LimitsTestExchange first = ask("k1");
        await(open.handle(first, openTest.exit("next")));
        await(open.handle(ask("k1"), openTest.exit("next")));
        GatewayException limited = refusal(open.handle(ask("k1"), openTest.exit("next")));
        assertThat(limited.status()).isEqualTo(429);
        first.complete(Completion.Outcome.COMPLETED, 200, new Usage(1, 1, 0, 0, 0), 10);
        JsonNode scopes = admin(openTest, "/limits");
        assertThat(scopes.at("/scopes/0/scope").asText()).isEqualTo("key:k1");
        assertThat(scopes.at("/scopes/0/requests/remaining").asInt()).isZero();

        server.stop();
        long sent = System.nanoTime();
        LimitsTestExchange admitted = ask("k2");
        await(open.handle(admitted, openTest.exit("next")));
        assertThat(admitted.attribute(LimitsBinding.STORE_UNAVAILABLE)).isEqualTo("fail_open");
        assertThat(admitted.attribute(LimitsBinding.STORE_UNAVAILABLE_BINDING)).isEqualTo("limits");
        // Counted in this replica's memory meanwhile: rpm 2 still holds.
        await(open.handle(ask("k2"), openTest.exit("next")));
        assertThat(refusal(open.handle(ask("k2"), openTest.exit("next"))).status()).isEqualTo(429);
        admitted.complete(Completion.Outcome.COMPLETED, 200, new Usage(1, 1, 0, 0, 0), 10);

        LimitsTestExchange refused = ask("k3");
        GatewayException unavailable = refusal(closed.handle(refused, closedTest.exit("next")));
        assertThat(unavailable.kind()).isEqualTo(ErrorKind.UNAVAILABLE);
        assertThat(unavailable.status()).isEqualTo(503);
        assertThat(unavailable.headers().get("retry-after")).isEqualTo("1");
        assertThat(refused.attribute(LimitsBinding.STORE_UNAVAILABLE)).isEqualTo("fail_closed");
        assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - sent)).as("no request waited long").isLessThan(5_000);
        assertThat(admin(closedTest, "/l2", 503).get("error").asText()).contains("did not answer");

        server.start();
        awaitTrue(() -> connected(open) && connected(closed));
        LimitsTestExchange back = ask("k3");
        await(closed.handle(back, closedTest.exit("next")));
        assertThat(back.attribute(LimitsBinding.STORE_UNAVAILABLE)).isNull();
        open.close();
        closed.close();
    }

    @Test
    void aRedisThatStopsAnsweringCostsARequestTheTimeoutAndNoMore() throws Exception
    {
        TestBindingContext test = new TestBindingContext("next");
        ProxyBinding open = binding("{\"key\": {\"max_concurrent\": 5}, \"store\": {\"redis\": {\"url\": \"" + server.url()
            + "\", \"timeout\": \"200ms\"}}}", live(test));
        awaitTrue(() -> connected(open));
        server.pause();
        try
        {
            for (int i = 0; i < 3; i++)
            {
                LimitsTestExchange exchange = ask("k-paused");
                long sent = System.nanoTime();
                await(open.handle(exchange, test.exit("next")));
                long waited = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - sent);
                assertThat(exchange.attribute(LimitsBinding.STORE_UNAVAILABLE)).isEqualTo("fail_open");
                // At least the timeout: Redis was given its chance; at most the timeout and a second for a starved machine.
                assertThat(waited).isBetween(190L, 1_200L);
                exchange.complete(Completion.Outcome.COMPLETED, 200, new Usage(1, 1, 0, 0, 0), 10);
            }
        }
        finally
        {
            server.resume();
        }
        awaitTrue(() -> connected(open));
    }

    /** @return whether a probe exchange was admitted through Redis (not by the fallback) */
    private static boolean connected(ProxyBinding binding)
    {
        LimitsTestExchange probe = ask("probe-" + System.nanoTime());
        boolean passed = binding.handle(probe, exchange -> CompletableFuture.completedFuture(null)).toCompletableFuture()
            .handle((reply, failure) -> failure == null).join();
        return passed && probe.attribute(LimitsBinding.STORE_UNAVAILABLE) == null;
    }

    private static LimitsTestExchange ask(String key)
    {
        return new LimitsTestExchange("gpt-4o", "hello", 10).as(new Identity(key, null, Map.of()));
    }

    private static GatewayException refusal(CompletionStage<Reply> stage) throws Exception
    {
        try
        {
            stage.toCompletableFuture().get(20, TimeUnit.SECONDS);
        }
        catch (java.util.concurrent.ExecutionException e)
        {
            return GatewayException.of(e.getCause());
        }
        throw new AssertionError("expected a refusal");
    }

    private JsonNode admin(TestBindingContext context, String path) throws Exception
    {
        return admin(context, path, 200);
    }

    private JsonNode admin(TestBindingContext context, String path, int status) throws Exception
    {
        AdminResponse response = await(context.adminRoutes().get("GET " + path)
            .handle(new AdminRequest("GET", path, null, null, new byte[0])));
        assertThat(response.status()).isEqualTo(status);
        return Json.MAPPER.readTree(new String(response.body(), StandardCharsets.UTF_8));
    }

    private ProxyBinding binding(String optionsJson, BindingContext context)
    {
        try
        {
            BindingConfig config = new BindingConfig("limits", "limits", BindingKind.PROXY, Json.MAPPER.readTree(optionsJson),
                "next", List.of());
            ProxyBinding binding = new LimitsFactory().create(config, context);
            opened.add(binding::close);
            return binding;
        }
        catch (com.fasterxml.jackson.core.JsonProcessingException e)
        {
            throw new IllegalArgumentException(e);
        }
    }

    private interface Check
    {
        boolean ok() throws Exception;
    }

    private static void awaitTrue(Check check) throws Exception
    {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (!check.ok())
        {
            if (System.nanoTime() > deadline)
                throw new AssertionError("not reached within 20 s");
            Thread.sleep(20);
        }
    }
}
