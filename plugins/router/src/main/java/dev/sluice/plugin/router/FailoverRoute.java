package dev.sluice.plugin.router;

import dev.sluice.api.ErrorKind;
import dev.sluice.api.GatewayException;
import dev.sluice.api.exchange.Exchange.Attempt;
import dev.sluice.api.exchange.Exchange;
import dev.sluice.api.exchange.Exchange.Identity;
import dev.sluice.api.exchange.Reply;
import dev.sluice.api.exchange.ResponseHeaders;
import dev.sluice.api.binding.BindingContext.Scheduler;
import dev.sluice.support.upstream.StreamHold;

import java.time.Duration;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.EnumSet;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.BiConsumer;

/**
 * A route with several targets: the attempt state machine.
 *
 * <p>The first attempt goes to a target of the first priority group that is available (not ejected, not resting),
 * chosen by the route's balancer. A failure named in {@code retry.on} moves on: to another untried target of the same
 * group, then of the next group; once every target was tried, to the best of them again after a backoff. It stops
 * when {@code attempts} are spent, when the route's deadline passed, when the failed target's retry budget is
 * spent, or at a failure not named in {@code on}: the client then gets the last attempt's error. A 429 whose
 * {@code retry-after} is at most {@code max_retry_after} is waited out when the same target is the only one left;
 * a longer one moves to another target at once or ends the exchange. Streams are held ({@link StreamHold}) until their
 * first content, so a failure before it moves on too; after it, nothing is retried.
 *
 * <p>When every target of the route is ejected or resting, the one whose cool-down ends first is tried anyway.
 */
final class FailoverRoute
{
    private static final long SECOND = 1_000_000_000L;

    private final TargetState[] targets;
    private final int[] groupStarts;
    private final RouteSettings.Balance balance;
    private final int attempts;
    private final EnumSet<FailureClass> retryOn;
    private final long backoffInitial;
    private final long backoffMax;
    private final long maxRetryAfter;
    private final boolean hold;
    private final int maxHeldEvents;
    private final long maxHeldBytes;
    private final Duration timeout;
    private final String stickyHeader;
    private final boolean sticky;
    private final boolean attemptHeaders;
    private final Scheduler scheduler;
    final String path;

    /**
     * @param targets        the targets sorted by priority (stable: config order within a group)
     * @param settings       the route's settings
     * @param attemptHeaders whether answers carry {@code x-sluice-attempts} and {@code x-sluice-target}
     * @param scheduler      for backoffs and deadlines
     */
    FailoverRoute(String path, List<TargetState> targets, RouteSettings settings, boolean attemptHeaders,
                  Scheduler scheduler)
    {
        this.path = path;
        this.targets = targets.toArray(new TargetState[0]);
        int groups = 1;
        for (int i = 1; i < this.targets.length; i++)
        {
            if (this.targets[i].priority != this.targets[i - 1].priority)
                groups++;
        }
        groupStarts = new int[groups + 1];
        int g = 1;
        for (int i = 1; i < this.targets.length; i++)
        {
            if (this.targets[i].priority != this.targets[i - 1].priority)
                groupStarts[g++] = i;
        }
        groupStarts[groups] = this.targets.length;
        this.balance = settings.balancePolicy();
        RouteSettings.Retry retry = settings.retry();
        this.attempts = retry.attempts() != null ? retry.attempts() : Math.min(3, this.targets.length);
        this.retryOn = EnumSet.noneOf(FailureClass.class);
        for (String on : retry.on())
            retryOn.add(FailureClass.parse(on, "on"));
        this.backoffInitial = retry.backoff().initial().toNanos();
        this.backoffMax = retry.backoff().max().toNanos();
        this.maxRetryAfter = retry.maxRetryAfter().toNanos();
        this.hold = settings.stream().holds();
        this.maxHeldEvents = settings.stream().maxHeldEvents();
        this.maxHeldBytes = settings.stream().bytes();
        this.timeout = settings.timeout();
        this.sticky = settings.sticky() != null;
        this.stickyHeader = sticky ? settings.sticky().header() : null;
        this.attemptHeaders = attemptHeaders;
        this.scheduler = scheduler;
    }

    TargetState[] targets()
    {
        return targets;
    }

    CompletionStage<Reply> handle(Exchange exchange)
    {
        Call call = new Call(exchange);
        call.start();
        return call.result;
    }

    /**
     * Picks the next target: an available untried one of the first group that has one, by the balancer; else, if
     * every target was tried, the best available of all (a second round); else, if none is available, the one whose
     * cool-down ends first. {@code claim} makes the pick the probe of a target past its cool-down.
     *
     * @param tried bit i set: target i was tried by this request
     * @return the index of the target, never -1
     */
    private int pick(long tried, String stickyKey, long now)
    {
        for (int g = 0; g + 1 < groupStarts.length; g++)
        {
            int i = choose(groupStarts[g], groupStarts[g + 1], tried, stickyKey, now);
            if (i >= 0)
                return i;
        }
        int again = choose(0, targets.length, 0, stickyKey, now);
        if (again >= 0)
            return again;
        int soonest = 0;
        for (int i = 1; i < targets.length; i++)
        {
            if (targets[i].availableAt() - targets[soonest].availableAt() < 0)
                soonest = i;
        }
        return soonest;
    }

    /** @return an available target of {@code [from, to)} not in {@code tried}, by the balancer, or -1 */
    private int choose(int from, int to, long tried, String stickyKey, long now)
    {
        int candidates = 0;
        int totalWeight = 0;
        int only = -1;
        for (int i = from; i < to; i++)
        {
            if ((tried & (1L << i)) == 0 && targets[i].available(now))
            {
                candidates++;
                totalWeight += targets[i].weight;
                only = i;
            }
        }
        if (candidates == 0)
            return -1;
        if (candidates == 1)
            return only;
        if (stickyKey != null)
            return rendezvous(from, to, tried, stickyKey, now);
        ThreadLocalRandom random = ThreadLocalRandom.current();
        int first = weighted(from, to, tried, totalWeight, random.nextInt(totalWeight), now);
        if (balance == RouteSettings.Balance.WEIGHTED)
            return first;
        int second = first;
        for (int tries = 0; second == first && tries < 4; tries++)
            second = weighted(from, to, tried, totalWeight, random.nextInt(totalWeight), now);
        if (second == first)
            return first;
        if (balance == RouteSettings.Balance.LEAST_INFLIGHT)
            return targets[second].target.inFlight() < targets[first].target.inFlight() ? second : first;
        return targets[second].cost() < targets[first].cost() ? second : first;
    }

    private int weighted(int from, int to, long tried, int totalWeight, int point, long now)
    {
        int last = -1;
        for (int i = from; i < to; i++)
        {
            if ((tried & (1L << i)) == 0 && targets[i].available(now))
            {
                last = i;
                point -= targets[i].weight;
                if (point < 0)
                    return i;
            }
        }
        return last;
    }

    /** Weighted rendezvous hashing: the highest weight / −ln(hash) wins, so a caller stays where it was. */
    private int rendezvous(int from, int to, long tried, String key, long now)
    {
        int best = -1;
        double bestScore = -1;
        for (int i = from; i < to; i++)
        {
            if ((tried & (1L << i)) != 0 || !targets[i].available(now))
                continue;
            long h = mix(key.hashCode() * 0x9E3779B97F4A7C15L ^ targets[i].name().hashCode());
            double u = ((h >>> 11) + 1) / (double)(1L << 53);
            double score = targets[i].weight / -Math.log(u);
            if (score > bestScore)
            {
                bestScore = score;
                best = i;
            }
        }
        return best;
    }

    private static long mix(long z)
    {
        z = (z ^ (z >>> 33)) * 0xff51afd7ed558ccdL;
        z = (z ^ (z >>> 33)) * 0xc4ceb9fe1a85ec53L;
        return z ^ (z >>> 33);
    }

    private String stickyKey(Exchange exchange)
    {
        if (!sticky)
            return null;
        if (stickyHeader != null)
            return exchange.headers().get(stickyHeader);
        Identity identity = exchange.identity();
        return identity == null ? null : identity.keyId();
    }

    /** @return the provider's {@code retry-after} in nanoseconds, or 0 if it sent none or none that parses */
    static long retryAfterNanos(GatewayException error)
    {
        ResponseHeaders headers = error.headers();
        String ms = headers.get("retry-after-ms");
        try
        {
            if (ms != null)
                return Math.max(0, (long)(Double.parseDouble(ms.trim()) * 1_000_000));
            String value = headers.get("retry-after");
            if (value == null)
                return 0;
            value = value.trim();
            if (!value.isEmpty() && Character.isDigit(value.charAt(0)))
                return Math.max(0, (long)(Double.parseDouble(value) * SECOND));
            ZonedDateTime at = ZonedDateTime.parse(value, DateTimeFormatter.RFC_1123_DATE_TIME);
            return Math.max(0, Duration.between(ZonedDateTime.now(at.getZone()), at).toNanos());
        }
        catch (RuntimeException e)
        {
            return 0;
        }
    }

    /** One request on this route: its attempts, one at a time. */
    private final class Call implements BiConsumer<Reply, Throwable>
    {
        final CompletableFuture<Reply> result = new CompletableFuture<>();
        private final Exchange exchange;
        private final String stickyKey;
        private final long deadline;
        private long tried;
        private int made;
        private int current = -1;
        private Attempt attempt;
        private long sentAt;
        private Scheduler.Task deadlineTask;
        private volatile boolean clientGone;
        private volatile boolean timedOut;
        // The gateway's own warm-up: routed like any exchange, but what it meets is no evidence about the targets (its
        // answers are made in the process), so it moves no ejection, latency or retry budget.
        private final boolean warmup;

        Call(Exchange exchange)
        {
            this.exchange = exchange;
            this.warmup = exchange.warmup();
            this.stickyKey = stickyKey(exchange);
            this.deadline = timeout == null ? 0 : System.nanoTime() + timeout.toNanos();
        }

        void start()
        {
            // Registered before the first attempt starts, so it belongs to the exchange, not to one attempt.
            exchange.onAbort(cause -> clientGone = true);
            if (timeout != null)
                deadlineTask = scheduler.schedule(this::deadlinePassed, timeout);
            long now = System.nanoTime();
            int first = pick(0, stickyKey, now);
            if (!warmup)
                targets[first].budget.request(now);
            send(first, now);
        }

        private void send(int index, long now)
        {
            if (result.isDone())
                return;
            TargetState target = targets[index];
            target.tryAcquire(now);
            current = index;
            tried |= 1L << index;
            made++;
            attempt = exchange.startAttempt(target.name());
            if (target.alias != null)
                exchange.targetModel(target.alias);
            sentAt = now;
            CompletionStage<Reply> reply;
            try
            {
                reply = target.target.handle(exchange);
            }
            catch (Throwable t)
            {
                reply = CompletableFuture.failedFuture(t);
            }
            reply.whenComplete(this);
        }

        @Override
        public void accept(Reply reply, Throwable failure)
        {
            if (failure != null)
            {
                failed(failure);
                return;
            }
            long now = System.nanoTime();
            if (!warmup)
                targets[current].latency(now - sentAt, now);
            if (reply instanceof Reply.Stream stream && hold && mayRetry())
            {
                StreamHold.hold(stream, maxHeldEvents, maxHeldBytes).whenComplete((held, f) ->
                {
                    if (f != null)
                        failed(f);
                    else
                        answered(held);
                });
                return;
            }
            answered(reply);
        }

        /** @return whether a failure of the current attempt could still lead to another one */
        private boolean mayRetry()
        {
            return made < attempts && !retryOn.isEmpty();
        }

        private void answered(Reply reply)
        {
            if (!warmup)
                targets[current].succeeded(System.nanoTime());
            cancelDeadline();
            if (attemptHeaders)
                reply = reply.withHeaders(reply.headers().with("x-sluice-attempts", Integer.toString(made))
                    .with("x-sluice-target", targets[current].name()));
            if (!result.complete(reply) && reply instanceof Reply.Stream late)
                late.events().cancel(new IllegalStateException("route already answered"));
        }

        private void failed(Throwable failure)
        {
            GatewayException error = GatewayException.of(failure);
            long now = System.nanoTime();
            TargetState target = targets[current];
            FailureClass kind = FailureClass.of(error, attempt.status());
            long retryAfter = kind == FailureClass.RATE_LIMITED ? retryAfterNanos(error) : 0;
            if (timedOut || deadline != 0 && deadline - now <= 0)
            {
                finish(deadlineError(error));
                return;
            }
            if (!warmup && target.failed(kind, retryAfter, now))
                exchange.attribute(RouterBinding.EJECTED, target.name());
            if (clientGone || !retryOn.contains(kind) || made >= attempts)
            {
                finish(error);
                return;
            }
            int next = kind == FailureClass.CONTEXT_WINDOW ? pickOther(now) : pick(tried, stickyKey, now);
            if (next < 0)
            {
                finish(error);
                return;
            }
            long delay = 0;
            if (next == current)
            {
                if (retryAfter > maxRetryAfter)
                {
                    finish(error);
                    return;
                }
                delay = Math.max(retryAfter, backoff());
            }
            else if ((tried & (1L << next)) != 0)
            {
                delay = backoff();
            }
            if (deadline != 0 && deadline - (now + delay) <= 0)
            {
                finish(deadlineError(error));
                return;
            }
            if (!warmup && !target.budget.tryRetry(now))
            {
                exchange.attribute(RouterBinding.RETRY_REFUSED, "budget");
                finish(error);
                return;
            }
            // Failed only when the exchange moves on: the attempt whose error the client gets ends with the exchange,
            // as the one the answer came from (ANSWERED).
            attempt.fail(error);
            if (delay <= 0)
            {
                send(next, now);
                return;
            }
            scheduler.schedule(() ->
            {
                if (clientGone)
                    finish(error);
                else
                    send(next, System.nanoTime());
            }, Duration.ofNanos(delay));
        }

        /** @return an untried target other than the current one (a larger context window may be there), or -1 */
        private int pickOther(long now)
        {
            int next = pick(tried, stickyKey, now);
            return (tried & (1L << next)) != 0 ? -1 : next;
        }

        /** Exponential backoff with full jitter, by the attempts made so far. */
        private long backoff()
        {
            long bound = backoffInitial << Math.min(made - 1, 20);
            if (bound <= 0 || bound > backoffMax)
                bound = backoffMax;
            return bound <= 0 ? 0 : ThreadLocalRandom.current().nextLong(bound + 1);
        }

        private GatewayException deadlineError(GatewayException last)
        {
            return new GatewayException(ErrorKind.UPSTREAM_TIMEOUT, 504, "the route's timeout of " + timeout.toMillis()
                + " ms passed after " + made + (made == 1 ? " attempt" : " attempts") + "; the last: " + last.getMessage(),
                null, null, last, last.headers());
        }

        private void deadlinePassed()
        {
            if (result.isDone())
                return;
            timedOut = true;
            Attempt a = attempt;
            if (a != null)
                a.cancel(new GatewayException(ErrorKind.UPSTREAM_TIMEOUT, "the route's timeout passed"));
        }

        private void cancelDeadline()
        {
            Scheduler.Task task = deadlineTask;
            if (task != null)
                task.cancel();
        }

        private void finish(GatewayException error)
        {
            cancelDeadline();
            if (attemptHeaders)
                error = error.withHeaders(error.headers().with("x-sluice-attempts", Integer.toString(made))
                    .with("x-sluice-target", targets[current].name()));
            result.completeExceptionally(error);
        }
    }
}
