package dev.sluice.plugin.limits;

/**
 * The two clocks a {@link LimitStore} reads: a monotonic one for rates (never jumps, so an NTP step neither frees nor
 * blocks a minute's allowance) and the wall clock for budget periods (windows are calendar-aligned in UTC, so they
 * must agree across replicas and restarts). Tests use a manual one; the gateway uses {@link #system()}.
 */
interface LimitClock
{
    /** @return monotonic nanoseconds, never negative, from an arbitrary origin fixed for this clock */
    long nanos();

    /** @return the wall clock, in milliseconds since the epoch */
    long epochMillis();

    /** @return {@link System#nanoTime()} from the clock's creation, and {@link System#currentTimeMillis()} */
    static LimitClock system()
    {
        long origin = System.nanoTime();
        return new LimitClock()
        {
            @Override
            public long nanos()
            {
                return System.nanoTime() - origin;
            }

            @Override
            public long epochMillis()
            {
                return System.currentTimeMillis();
            }
        };
    }
}
