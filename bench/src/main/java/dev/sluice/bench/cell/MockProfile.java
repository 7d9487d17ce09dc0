package dev.sluice.bench.cell;

import java.util.List;

/**
 * A latency profile of the mock provider: {@code L0} answers at once, {@code L<ms>} after a fixed delay,
 * {@code LS} streams (first event after 200 ms, then one every 20 ms, 10 events).
 *
 * @param name           the profile's name in reports
 * @param delayMillis    wait before a non-streamed answer
 * @param firstEventMillis wait before the first SSE event
 * @param intervalMillis wait before each following content event
 * @param events         content events per stream
 */
record MockProfile(String name, long delayMillis, long firstEventMillis, long intervalMillis, int events)
{
    /** Answers at once. */
    static final MockProfile L0 = new MockProfile("L0", 0, 0, 0, 10);
    /** Streams: first event after 200 ms, then one every 20 ms, 10 events. */
    static final MockProfile LS = new MockProfile("LS", 0, 200, 20, 10);

    /**
     * @param millis the delay before every answer
     * @return the profile {@code L<millis>}
     */
    static MockProfile fixed(long millis)
    {
        return new MockProfile("L" + millis, millis, 0, 0, 10);
    }

    /** @return the {@code MockProvider} command-line flags of this profile */
    List<String> args()
    {
        return List.of("--delay-ms", Long.toString(delayMillis), "--first-event-ms", Long.toString(firstEventMillis),
            "--interval-ms", Long.toString(intervalMillis), "--events", Integer.toString(events));
    }

    /**
     * @param stream whether the requests ask for a stream
     * @return the time the mock spends waiting by script before the last byte of an answer, in ms
     */
    double scriptedMillis(boolean stream)
    {
        return stream ? firstEventMillis + (double)events * intervalMillis : delayMillis;
    }
}
