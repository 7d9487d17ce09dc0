package dev.sluice.examples.exchangetap;

import java.time.Duration;

/**
 * The options of an {@code exchange-tap} binding, bound from the config by {@link dev.sluice.support.config.Options#bind}:
 * keys are the snake_case names of the components, any other key is a startup error naming its path.
 *
 * <pre>{@code
 * options: { capacity: 256, admin_path: /exchange-tap/recent, summary_every: 1m, tap_header: edge-1, close_file: /var/log/tap.closed }
 * }</pre>
 *
 * <p>An {@link IllegalArgumentException} thrown here whose message starts with a field name becomes a
 * {@link dev.sluice.api.config.ConfigException} at {@code bindings.NAME.options.FIELD}.
 *
 * @param capacity     how many completions are kept, the newest first out; {@code null} (absent) means 256; 1 to
 *                     65,536
 * @param adminPath    where the admin listener serves them ({@code GET}); {@code null} means
 *                     {@value #DEFAULT_ADMIN_PATH}. Two taps need two paths
 * @param summaryEvery how often one summary line is logged at INFO; {@code null} means never
 * @param tapHeader    the value of an {@code x-tap} response header put on every answer and every error that passes
 *                     this binding; {@code null} means no header
 * @param closeFile    a file to which {@code close()} appends one line (a record of the shutdown, for operators and
 *                     tests); {@code null} means none. Never touched under {@code sluice check}
 */
public record ExchangeTapOptions(Integer capacity, String adminPath, Duration summaryEvery, String tapHeader,
                                 String closeFile)
{
    /** The admin path when none is configured. */
    public static final String DEFAULT_ADMIN_PATH = "/exchange-tap/recent";

    /** The largest capacity: 65,536 records of about 300 bytes each, some 20 MB. */
    public static final int MAX_CAPACITY = 1 << 16;

    /** Checks every option and fills the defaults. */
    public ExchangeTapOptions
    {
        if (capacity == null)
            capacity = 256;
        if (capacity < 1 || capacity > MAX_CAPACITY)
            throw new IllegalArgumentException("capacity: value: " + capacity + " (expected: 1 to " + MAX_CAPACITY + ")");
        if (adminPath == null)
            adminPath = DEFAULT_ADMIN_PATH;
        if (!adminPath.startsWith("/") || adminPath.indexOf('?') >= 0)
            throw new IllegalArgumentException("admin_path: value: \"" + adminPath + "\" (expected: a path starting with /, no query)");
        if (summaryEvery != null && (summaryEvery.isNegative() || summaryEvery.isZero()))
            throw new IllegalArgumentException("summary_every: value: " + summaryEvery + " (expected: a duration above zero)");
        if (closeFile != null && closeFile.isBlank())
            throw new IllegalArgumentException("close_file: value: \"" + closeFile + "\" (expected: a file path)");
    }
}
