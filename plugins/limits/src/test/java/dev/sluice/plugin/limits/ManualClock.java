package dev.sluice.plugin.limits;

import java.util.concurrent.atomic.AtomicLong;

/** A {@link LimitClock} the test moves by hand; the wall clock starts at 2026-12-01T12:00:00Z. */
final class ManualClock implements LimitClock
{
    static final long START_MILLIS = 1_796_126_400_000L;

    private final AtomicLong nanos = new AtomicLong();
    private final AtomicLong millis = new AtomicLong(START_MILLIS);

    /** Moves both clocks ahead by {@code millis}. */
    void advanceMillis(long by)
    {
        nanos.addAndGet(by * 1_000_000L);
        millis.addAndGet(by);
    }

    @Override
    public long nanos()
    {
        return nanos.get();
    }

    @Override
    public long epochMillis()
    {
        return millis.get();
    }
}
