package dev.sluice.runtime.internal.http;

import dev.sluice.runtime.internal.config.GatewayConfig.ClientTimeouts;

/**
 * Opens the runtime's package-private {@link ConnectionSweep} to the JMH benchmarks, so that they time the period the
 * gateway runs rather than a copy of it. It lives in the runtime's package but in the bench module, which is never
 * shipped (see the openai plugin's {@code BenchAccess} for why the split package is harmless here).
 *
 * <pre>{@code
 * Runnable period = SweepBenchAccess.period(gateway, execution, timeouts);
 * period.run();   // one look at every connection of gateway's connector, as a scheduled period makes
 * }</pre>
 */
public final class SweepBenchAccess
{
    private SweepBenchAccess()
    {
    }

    /**
     * A sweep over {@code gateway}'s connector beside the gateway's own: stopped, so that running it looks at every
     * connection once and schedules nothing (the gateway's own sweep keeps its period).
     *
     * @return one period per {@link Runnable#run()}
     */
    public static Runnable period(HttpGateway gateway, Execution execution, ClientTimeouts timeouts)
    {
        ConnectionSweep sweep = new ConnectionSweep(gateway.connector(), execution.scheduler(), execution.threads(), timeouts);
        sweep.stop();
        return new Period(sweep);
    }

    /** @return how many connections the last {@link Runnable#run()} of {@code period} looked at */
    public static int connectionsSeen(Runnable period)
    {
        return ((Period) period).sweep.lastSweepConnections();
    }

    /** The sweep's look at the connections, every time it runs (the sweep's own ticks do it once per period). */
    private record Period(ConnectionSweep sweep) implements Runnable
    {
        @Override
        public void run()
        {
            sweep.sweepConnectionsNow();
        }
    }
}
