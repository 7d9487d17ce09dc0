package dev.sluice.plugin.mock;

import java.time.Duration;

/**
 * Options of a {@code mock} client binding. All are optional: {@code text} and {@code echo} choose the answer, the
 * others make the mock misbehave on command, so retries and failover can be tried without a real provider.
 *
 * <pre>{@code
 * south_mock: { type: mock, kind: client }                                   # answers DEFAULT_TEXT
 * south_mock: { type: mock, kind: client, options: { text: "All good." } }   # answers a fixed text
 * south_mock: { type: mock, kind: client, options: { echo: true } }          # answers "You said: <last user text>"
 * south_mock: { type: mock, kind: client, options: { fail_status: 503 } }    # every request fails with 503
 * south_mock: { type: mock, kind: client, options: { fail_status: 429, retry_after: 2s } }   # 429, retry-after: 2
 * south_mock: { type: mock, kind: client, options: { delay: 250ms } }        # answers after 250 ms
 * south_mock: { type: mock, kind: client, options: { fail_after_events: 3 } }   # streams 3 words, then an error
 * south_mock: { type: mock, kind: client, options: { cut_after_events: 3 } }    # streams 3 words, then a cut
 * }</pre>
 *
 * <p>What each misbehaviour looks like to the stages before the mock is described in {@link MockClient}.
 *
 * @param text            the fixed answer; {@code null} for {@link #DEFAULT_TEXT}; must not be empty
 * @param echo            whether to answer {@code You said: <text of the last user message>} instead of a fixed text;
 *                        {@code null} for false; cannot be combined with {@code text}
 * @param failStatus      the HTTP status, 400..599, every request fails with, as an upstream error would; {@code null}
 *                        for none; cannot be combined with {@code fail_after_events} or {@code cut_after_events}
 * @param retryAfter      the {@code retry-after} header sent with the {@code fail_status} failure, in whole seconds
 *                        (rounded up); {@code null} for none; needs {@code fail_status}
 * @param delay           how long each answer, failure or stream's start waits; {@link Duration#ZERO} (the default) for
 *                        none; not negative
 * @param failAfterEvents the number of text deltas a streamed answer sends before it fails with an upstream error
 *                        event; {@code null} for none; 0 or more; no effect on answers that are not streamed
 * @param cutAfterEvents  the number of text deltas a streamed answer sends before it ends as a cut connection would;
 *                        {@code null} for none; 0 or more; no effect on answers that are not streamed; cannot be
 *                        combined with {@code fail_after_events}
 */
public record MockOptions(String text, Boolean echo, Integer failStatus, Duration retryAfter, Duration delay,
                          Integer failAfterEvents, Integer cutAfterEvents)
{
    /** The answer when neither {@code text} nor {@code echo} is set. */
    public static final String DEFAULT_TEXT = "Hello from Sluice's built-in mock provider.";

    /** Validates the values and their combination, and fills the defaults. */
    public MockOptions
    {
        if (text != null && text.isEmpty())
            throw new IllegalArgumentException("text: value: \"\" (expected: a non-empty answer, or no text for the default)");
        if (text != null && Boolean.TRUE.equals(echo))
            throw new IllegalArgumentException("echo: value: true "
                + "(expected: false or absent when text is set; echo answers with the user's own words)");
        if (failStatus != null && (failStatus < 400 || failStatus > 599))
            throw new IllegalArgumentException("fail_status: value: " + failStatus + " (expected: an error status, 400..599)");
        if (retryAfter != null && retryAfter.isNegative())
            throw new IllegalArgumentException("retry_after: value: " + retryAfter + " (expected: 0s or more)");
        if (retryAfter != null && failStatus == null)
            throw new IllegalArgumentException("retry_after: value: " + retryAfter
                + " (expected: absent unless fail_status is set; it is a header of that failure)");
        if (delay != null && delay.isNegative())
            throw new IllegalArgumentException("delay: value: " + delay + " (expected: 0ms or more)");
        if (failAfterEvents != null && failAfterEvents < 0)
            throw new IllegalArgumentException("fail_after_events: value: " + failAfterEvents + " (expected: 0 or more)");
        if (cutAfterEvents != null && cutAfterEvents < 0)
            throw new IllegalArgumentException("cut_after_events: value: " + cutAfterEvents + " (expected: 0 or more)");
        if (failAfterEvents != null && cutAfterEvents != null)
            throw new IllegalArgumentException("cut_after_events: value: " + cutAfterEvents
                + " (expected: absent when fail_after_events is set; a stream ends one way)");
        if (failStatus != null && failAfterEvents != null)
            throw new IllegalArgumentException("fail_after_events: value: " + failAfterEvents
                + " (expected: absent when fail_status is set; no stream starts then)");
        if (failStatus != null && cutAfterEvents != null)
            throw new IllegalArgumentException("cut_after_events: value: " + cutAfterEvents
                + " (expected: absent when fail_status is set; no stream starts then)");
        text = text == null ? DEFAULT_TEXT : text;
        echo = echo != null && echo;
        delay = delay == null ? Duration.ZERO : delay;
    }
}
