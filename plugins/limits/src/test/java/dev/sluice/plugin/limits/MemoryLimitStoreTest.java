package dev.sluice.plugin.limits;

import org.junit.jupiter.api.Test;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import static org.assertj.core.api.Assertions.assertThat;

/** The in-memory store's counting, all-or-nothing reservations and eviction, on a manual clock. */
class MemoryLimitStoreTest
{
    private static final long NANOS = 1_000_000_000L;
    private static final long MINUTE_MILLIS = 60_000;

    private final ManualClock clock = new ManualClock();
    private final MemoryLimitStore store = new MemoryLimitStore(clock, 60 * NANOS);

    private static LimitStore.Demand[] demand(String scope, Limits limits)
    {
        return new LimitStore.Demand[] {new LimitStore.Demand(scope, limits)};
    }

    private static Limits rpm(long n)
    {
        return new Limits(n, 0, 0, 0, null);
    }

    private static Limits budget(long nanos, String period)
    {
        return new Limits(0, 0, 0, nanos, BudgetPeriod.parse(period));
    }

    private LimitStore.ScopeSnapshot snapshot(String scope)
    {
        return store.snapshot().stream().filter(s -> s.scope().equals(scope)).findFirst().orElseThrow();
    }

    @Test
    void requestRateAdmitsItsLimitAtOnceThenOneEveryInterval()
    {
        LimitStore.Demand[] demands = demand("key:a", rpm(6));
        for (int i = 0; i < 6; i++)
            assertThat(store.reserve(demands, 0, 0)).isInstanceOf(LimitStore.Reservation.class);
        LimitStore.Admission refused = store.reserve(demands, 0, 0);
        assertThat(refused).isInstanceOfSatisfying(LimitStore.Refusal.class, r ->
        {
            assertThat(r.reason()).isEqualTo(LimitStore.Reason.REQUESTS);
            // 6 per minute: one every 10 s, and the next fits 10 s from now.
            assertThat(r.retryAfterNanos()).isEqualTo(10 * NANOS);
            assertThat(r.requests()).isEqualTo(new LimitStore.RateStatus(6, 0, 60 * NANOS));
        });

        clock.advanceMillis(9_999);
        assertThat(store.reserve(demands, 0, 0)).isInstanceOf(LimitStore.Refusal.class);
        clock.advanceMillis(1);
        assertThat(store.reserve(demands, 0, 0)).isInstanceOf(LimitStore.Reservation.class);
        assertThat(store.reserve(demands, 0, 0)).isInstanceOf(LimitStore.Refusal.class);
    }

    @Test
    void concurrencyAdmitsExactlyTheLimitAmongRacingThreads() throws Exception
    {
        LimitStore.Demand[] demands = demand("team:t", new Limits(0, 0, 7, 0, null));
        List<LimitStore.Admission> results = race(500, () -> store.reserve(demands, 0, 0));

        List<LimitStore.Reservation> admitted = reservations(results);
        assertThat(admitted).hasSize(7);
        assertThat(snapshot("team:t").inFlight()).isEqualTo(7);
        store.release(admitted.get(0));
        assertThat(store.reserve(demands, 0, 0)).isInstanceOf(LimitStore.Reservation.class);
        assertThat(store.reserve(demands, 0, 0)).isInstanceOfSatisfying(LimitStore.Refusal.class,
            r -> assertThat(r.reason()).isEqualTo(LimitStore.Reason.CONCURRENCY));
    }

    @Test
    void budgetAdmitsOnlyWhatFitsAmongRacingThreadsAndSettlesBackToZeroReserved() throws Exception
    {
        // A budget of 10 units, each request reserving 1: exactly 10 of 500 racing reservations fit.
        LimitStore.Demand[] demands = demand("team:t", budget(10 * NANOS, "1d"));
        List<LimitStore.Admission> results = race(500, () -> store.reserve(demands, 100, NANOS));

        List<LimitStore.Reservation> admitted = reservations(results);
        assertThat(admitted).hasSize(10);
        assertThat(snapshot("team:t").reserved()).isEqualTo(10 * NANOS);
        LimitStore.Refusal refusal = (LimitStore.Refusal) results.stream()
            .filter(a -> a instanceof LimitStore.Refusal).findFirst().orElseThrow();
        assertThat(refusal.reason()).isEqualTo(LimitStore.Reason.BUDGET);
        // 12:00 UTC: the day's window resets in 12 hours.
        assertThat(refusal.retryAfterNanos()).isEqualTo(12 * 3600 * NANOS);

        // Each settles for less than it reserved: the spend is the sum, nothing stays reserved.
        for (LimitStore.Reservation r : admitted)
            store.settle(r, 40, NANOS / 4);
        LimitStore.ScopeSnapshot after = snapshot("team:t");
        assertThat(after.spent()).isEqualTo(10 * NANOS / 4);
        assertThat(after.reserved()).isZero();
        assertThat(after.inFlight()).isZero();
    }

    @Test
    void aRefusalByALaterScopeGivesBackWhatEarlierScopesTook()
    {
        Limits key = new Limits(10, 1_000, 5, 100 * NANOS, BudgetPeriod.parse("1d"));
        LimitStore.Demand[] full = {new LimitStore.Demand("key:a", key), new LimitStore.Demand("team:t", rpm(1))};
        assertThat(store.reserve(full, 100, NANOS)).isInstanceOf(LimitStore.Reservation.class);
        LimitStore.ScopeSnapshot before = snapshot("key:a");

        assertThat(store.reserve(full, 100, NANOS)).isInstanceOfSatisfying(LimitStore.Refusal.class, r ->
        {
            assertThat(r.demand()).isEqualTo(1);
            assertThat(r.reason()).isEqualTo(LimitStore.Reason.REQUESTS);
        });
        LimitStore.ScopeSnapshot after = snapshot("key:a");
        assertThat(after.inFlight()).isEqualTo(before.inFlight()).isEqualTo(1);
        assertThat(after.requests()).isEqualTo(before.requests());
        assertThat(after.tokens()).isEqualTo(before.tokens());
        assertThat(after.reserved()).isEqualTo(before.reserved()).isEqualTo(NANOS);
    }

    @Test
    void tokenRateChargesTheUsageInPlaceOfTheEstimate()
    {
        LimitStore.Demand[] demands = demand("model:m", new Limits(0, 1_200, 0, 0, null));
        LimitStore.Reservation r = (LimitStore.Reservation) store.reserve(demands, 1_000, 0);
        assertThat(snapshot("model:m").tokens().remaining()).isEqualTo(200);
        assertThat(store.reserve(demands, 300, 0)).isInstanceOfSatisfying(LimitStore.Refusal.class,
            refusal -> assertThat(refusal.reason()).isEqualTo(LimitStore.Reason.TOKENS));

        store.settle(r, 100, 0);
        assertThat(snapshot("model:m").tokens().remaining()).isEqualTo(1_100);
        assertThat(store.reserve(demands, 1_100, 0)).isInstanceOf(LimitStore.Reservation.class);
    }

    @Test
    void aRequestLargerThanTheTokenRateNeverFits()
    {
        LimitStore.Demand[] demands = demand("model:m", new Limits(0, 1_000, 0, 0, null));
        assertThat(store.reserve(demands, 1_001, 0)).isInstanceOfSatisfying(LimitStore.Refusal.class, r ->
        {
            assertThat(r.reason()).isEqualTo(LimitStore.Reason.TOKENS_TOO_LARGE);
            assertThat(r.retryAfterNanos()).isZero();
        });
        assertThat(snapshot("model:m").inFlight()).isZero();
    }

    @Test
    void aBudgetWindowEndsAtItsUtcBoundaryAndCarriesReservationsOver()
    {
        LimitStore.Demand[] demands = demand("key:a", budget(2 * NANOS, "1d"));
        LimitStore.Reservation open = (LimitStore.Reservation) store.reserve(demands, 0, NANOS);
        LimitStore.Reservation done = (LimitStore.Reservation) store.reserve(demands, 0, NANOS);
        store.settle(done, 0, NANOS);
        assertThat(store.reserve(demands, 0, NANOS)).isInstanceOf(LimitStore.Refusal.class);

        clock.advanceMillis(12 * 3600 * 1000L);
        // A new day: the spend is gone, the open reservation still counts.
        LimitStore.ScopeSnapshot day2 = snapshot("key:a");
        assertThat(day2.spent()).isZero();
        assertThat(day2.reserved()).isEqualTo(NANOS);
        assertThat(day2.windowEndMillis()).isEqualTo(ManualClock.START_MILLIS + 36 * 3600 * 1000L);
        assertThat(store.reserve(demands, 0, NANOS)).isInstanceOf(LimitStore.Reservation.class);
        assertThat(store.reserve(demands, 0, NANOS)).isInstanceOf(LimitStore.Refusal.class);
        store.settle(open, 0, NANOS / 2);
        assertThat(snapshot("key:a").spent()).isEqualTo(NANOS / 2);
    }

    @Test
    void calendarMonthWindowsStartOnTheFirstAtMidnightUtc()
    {
        BudgetPeriod month = BudgetPeriod.parse("month");
        long start = month.windowStart(ManualClock.START_MILLIS);
        assertThat(Instant.ofEpochMilli(start)).hasToString("2026-12-01T00:00:00Z");
        assertThat(Instant.ofEpochMilli(month.windowEnd(start))).hasToString("2027-01-01T00:00:00Z");
        BudgetPeriod days = BudgetPeriod.parse("30d");
        assertThat(days.windowEnd(days.windowStart(ManualClock.START_MILLIS)) - days.windowStart(ManualClock.START_MILLIS))
            .isEqualTo(30 * 24 * 3600 * 1000L);
    }

    @Test
    void evictionForgetsOnlyScopesThatAreIdleAndBackToTheirInitialState()
    {
        LimitStore.Reservation busy = (LimitStore.Reservation) store.reserve(demand("key:busy", rpm(60)), 0, 0);
        store.release((LimitStore.Reservation) store.reserve(demand("key:idle", rpm(60)), 0, 0));
        store.settle((LimitStore.Reservation) store.reserve(demand("key:spent", budget(10 * NANOS, "1d")), 0, NANOS), 0,
            NANOS);
        assertThat(store.size()).isEqualTo(3);

        clock.advanceMillis(30_000);
        store.evictIdle();
        assertThat(store.size()).as("nothing idle for a minute yet").isEqualTo(3);

        clock.advanceMillis(MINUTE_MILLIS);
        store.evictIdle();
        // busy holds a slot, spent has spend in today's window; idle is refilled and unused.
        assertThat(store.snapshot()).extracting(LimitStore.ScopeSnapshot::scope)
            .containsExactlyInAnyOrder("key:busy", "key:spent");

        store.release(busy);
        clock.advanceMillis(24 * 3600 * 1000L);
        store.evictIdle();
        assertThat(store.size()).isZero();
        // A scope evicted starts afresh.
        assertThat(store.reserve(demand("key:busy", rpm(60)), 0, 0)).isInstanceOf(LimitStore.Reservation.class);
        assertThat(snapshot("key:busy").inFlight()).isEqualTo(1);
    }

    @Test
    void evictionRacingWithReservationsNeverLosesAHeldSlot() throws Exception
    {
        MemoryLimitStore eager = new MemoryLimitStore(clock, 0);
        LimitStore.Demand[] demands = demand("key:a", new Limits(0, 0, 3, 0, null));
        ExecutorService sweeper = Executors.newSingleThreadExecutor();
        try
        {
            CountDownLatch stop = new CountDownLatch(1);
            sweeper.execute(() ->
            {
                while (stop.getCount() > 0)
                    eager.evictIdle();
            });
            for (int round = 0; round < 2_000; round++)
            {
                List<LimitStore.Reservation> held = new ArrayList<>();
                for (int i = 0; i < 5; i++)
                {
                    if (eager.reserve(demands, 0, 0) instanceof LimitStore.Reservation r)
                        held.add(r);
                }
                assertThat(held).hasSize(3);
                held.forEach(eager::release);
            }
            stop.countDown();
        }
        finally
        {
            sweeper.shutdown();
            assertThat(sweeper.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
        }
    }

    private static List<LimitStore.Admission> race(int n, Supplier<LimitStore.Admission> task)
        throws InterruptedException
    {
        ExecutorService pool = Executors.newFixedThreadPool(8);
        ConcurrentLinkedQueue<LimitStore.Admission> results = new ConcurrentLinkedQueue<>();
        CountDownLatch start = new CountDownLatch(1);
        try
        {
            for (int i = 0; i < n; i++)
            {
                pool.execute(() ->
                {
                    try
                    {
                        start.await();
                    }
                    catch (InterruptedException e)
                    {
                        Thread.currentThread().interrupt();
                        return;
                    }
                    results.add(task.get());
                });
            }
            start.countDown();
        }
        finally
        {
            pool.shutdown();
            assertThat(pool.awaitTermination(30, TimeUnit.SECONDS)).isTrue();
        }
        assertThat(results).hasSize(n);
        return new ArrayList<>(results);
    }

    private static List<LimitStore.Reservation> reservations(List<LimitStore.Admission> results)
    {
        List<LimitStore.Reservation> admitted = new ArrayList<>();
        for (LimitStore.Admission a : results)
        {
            if (a instanceof LimitStore.Reservation r)
                admitted.add(r);
        }
        return admitted;
    }
}
