package dev.sluice.plugin.log;

/**
 * The options of a {@code timing-headers} binding, bound strictly by {@link dev.sluice.support.config.Options#bind}:
 *
 * <pre>{@code
 * options: { format: server-timing }    # or x-headers, or both
 * }</pre>
 *
 * @param format which headers are added: {@code server-timing} (the default: one {@code Server-Timing} header),
 *               {@code x-headers} ({@code x-sluice-gateway-ms}, {@code x-sluice-upstream-ttfb-ms},
 *               {@code x-sluice-upstream-ms}) or {@code both}
 */
public record TimingHeadersOptions(String format)
{
    /** {@link #format()}: a {@code Server-Timing} header. */
    public static final String SERVER_TIMING = "server-timing";
    /** {@link #format()}: {@code x-sluice-*-ms} headers. */
    public static final String X_HEADERS = "x-headers";
    /** {@link #format()}: both. */
    public static final String BOTH = "both";

    /** Validates the format and fills the default. */
    public TimingHeadersOptions
    {
        if (format == null)
            format = SERVER_TIMING;
        else if (!format.equals(SERVER_TIMING) && !format.equals(X_HEADERS) && !format.equals(BOTH))
            throw new IllegalArgumentException("format: value: \"" + format + "\" (expected: server-timing, x-headers or both)");
    }

    /** @return whether a {@code Server-Timing} header is added */
    public boolean serverTiming()
    {
        return !format.equals(X_HEADERS);
    }

    /** @return whether {@code x-sluice-*-ms} headers are added */
    public boolean xHeaders()
    {
        return !format.equals(SERVER_TIMING);
    }
}
