package dev.sluice.plugin.keys;

import dev.sluice.api.binding.BindingContext.Scheduler;
import dev.sluice.support.redis.SharedRedis;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * Keeps a replica's copy of the shared keys ({@link KeysOverlay}) up to date: it re-reads the store when a replica
 * announces a change, and compares the store's version with its own every {@code refresh} on the runtime's scheduler,
 * which catches what a lost announcement missed (announcements are lost while the subscriber is disconnected). So a
 * change applies on every replica within {@code refresh} of being written, usually within milliseconds.
 *
 * <p>Reads are one at a time: a request while one is in flight makes one more read after it, never a queue. Nothing
 * here blocks: every Redis call is asynchronous and completes on the runtime's executor, where the overlay is applied.
 *
 * <p>While the store is away the last overlay read stays in force; the first failure of a streak is logged at WARN
 * (not during the first seconds of a start, while the connection is still being made), the return at INFO. A store
 * that comes back without its data (its version is gone) while this replica holds changes is written back from this
 * replica's overlay, so that a restarted Redis does not bring revoked keys back.
 */
final class OverlayFollower implements AutoCloseable
{
    private static final Logger LOG = LoggerFactory.getLogger(OverlayFollower.class);
    /** How long after the start a store that is not connected yet is not worth a warning. */
    private static final Duration STARTUP_GRACE = Duration.ofSeconds(2);

    private final String name;
    private final RedisKeysStore store;
    private final Supplier<KeysOverlay> current;
    private final Consumer<KeysOverlay> apply;
    private final long startedAt = System.nanoTime();
    private final Object lock = new Object();
    // Guarded by lock: whether a read is in flight, and the callers waiting for the next read (null: none wanted).
    private boolean reading;
    private CompletableFuture<Void> nextRead;
    private volatile boolean closed;
    private volatile boolean warned;
    private volatile String lastError;
    private volatile Instant readAt;
    private Scheduler.Task poll;

    /**
     * @param name    the binding's name, for logs
     * @param store   the store
     * @param current the overlay in force
     * @param apply   puts a newly read overlay in force; called on the runtime's executor, one read at a time
     */
    OverlayFollower(String name, RedisKeysStore store, Supplier<KeysOverlay> current, Consumer<KeysOverlay> apply)
    {
        this.name = name;
        this.store = store;
        this.current = current;
        this.apply = apply;
    }

    /** Subscribes to the announcements and starts comparing versions every {@code refresh}, the first at once. */
    void start(Scheduler scheduler, Duration refresh)
    {
        store.onChange(this::read);
        poll = scheduler.scheduleWithFixedDelay(this::compareVersions, Duration.ofMillis(50), refresh);
    }

    /** On the scheduler's thread: one asynchronous GET, then a read on the executor if the version moved. */
    private void compareVersions()
    {
        if (closed)
            return;
        store.version().whenComplete((version, failure) ->
        {
            if (failure != null)
            {
                failed(failure);
                return;
            }
            KeysOverlay now = current.get();
            if (!now.read() || Math.max(version, 0) != now.version())
                read();
            else
                reached();
        });
    }

    /**
     * Reads the store and applies what it holds.
     *
     * @return a stage completed once a read that started after this call finished (successfully or not)
     */
    CompletionStage<Void> read()
    {
        CompletableFuture<Void> waiting;
        boolean start;
        synchronized (lock)
        {
            if (nextRead == null)
                nextRead = new CompletableFuture<>();
            waiting = nextRead;
            start = !reading;
            reading = start || reading;
        }
        if (start)
            readOnce();
        return waiting;
    }

    private void readOnce()
    {
        CompletableFuture<Void> round;
        synchronized (lock)
        {
            round = nextRead;
            nextRead = null;
        }
        CompletionStage<Void> done = closed ? CompletableFuture.completedFuture(null)
            : store.read().thenCompose(this::applied).exceptionally(failure ->
            {
                failed(failure);
                return null;
            });
        done.whenComplete((ignored, unexpected) ->
        {
            if (unexpected != null)
                LOG.error("bindings.{}: applying the keys store's overlay failed", name, unexpected);
            round.complete(null);
            boolean again;
            synchronized (lock)
            {
                again = nextRead != null && !closed;
                reading = again;
            }
            if (again)
                readOnce();
        });
    }

    private CompletionStage<Void> applied(KeysOverlay read)
    {
        KeysOverlay held = current.get();
        if (read.version() < 0 && held.version() > 0)
        {
            // The store lost its data (a restart without persistence): write back what this replica knows, then read
            // what the store holds, this replica's or another's.
            return store.restore(held).thenCompose(written ->
            {
                if (written)
                    LOG.warn("bindings.{}: the keys store {} had lost its data; wrote back version {} ({} keys added, {}"
                        + " revoked)", name, store.describe(), held.version(), held.added().size(), held.revoked().size());
                return store.read();
            }).thenAccept(again -> accept(again.version() < 0 ? held : again));
        }
        accept(read);
        return CompletableFuture.completedFuture(null);
    }

    private void accept(KeysOverlay read)
    {
        KeysOverlay overlay = read.version() >= 0 ? read
            : new KeysOverlay(0, read.added(), read.stored(), read.revoked(), read.invalid());
        readAt = Instant.now();
        reached();
        apply.accept(overlay);
    }

    private void reached()
    {
        if (warned)
            LOG.info("bindings.{}: the keys store {} answers again", name, store.describe());
        warned = false;
        lastError = null;
    }

    private void failed(Throwable failure)
    {
        Throwable cause = failure instanceof CompletionException && failure.getCause() != null ? failure.getCause() : failure;
        String problem = cause instanceof SharedRedis.Unavailable ? cause.getMessage()
            : cause.getClass().getSimpleName() + ": " + cause.getMessage();
        lastError = problem;
        if (warned || closed)
            return;
        boolean starting = !current.get().read() && System.nanoTime() - startedAt < STARTUP_GRACE.toNanos();
        if (starting)
        {
            LOG.debug("bindings.{}: the keys store is not reached yet: {}", name, problem);
            return;
        }
        warned = true;
        KeysOverlay held = current.get();
        if (held.read())
            LOG.warn("bindings.{}: the keys store is unavailable, keeping its version {} ({} keys added, {} revoked) until"
                + " it answers: {}", name, held.version(), held.added().size(), held.revoked().size(), problem);
        else
            LOG.warn("bindings.{}: the keys store was never read; serving {} until it answers: {}", name,
                "the config's and the file's keys (or none, with on_unavailable: fail_closed)", problem);
    }

    /** @return the last problem with the store, or {@code null} since the last answer */
    String lastError()
    {
        return lastError;
    }

    /** @return when the store was last read, or {@code null} */
    Instant readAt()
    {
        return readAt;
    }

    /** Stops following; a read in flight completes and changes nothing that matters any more. */
    @Override
    public void close()
    {
        closed = true;
        if (poll != null)
            poll.cancel();
    }
}
