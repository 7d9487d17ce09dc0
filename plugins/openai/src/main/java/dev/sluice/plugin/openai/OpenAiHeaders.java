package dev.sluice.plugin.openai;

import dev.sluice.api.codec.DialectCodec.HeaderMapping;
import dev.sluice.api.codec.DialectCodec.RateLimits;
import dev.sluice.api.exchange.Headers;

import java.time.Duration;
import java.time.Instant;
import java.util.function.BiConsumer;

/**
 * OpenAI's response headers for {@link HeaderMapping}: the request id in {@code x-request-id}, and the rate limits
 * in {@code x-ratelimit-{limit,remaining,reset}-{requests,tokens}}, each reset a Go-style duration from now
 * ({@code 1s}, {@code 6m0s}, {@code 120ms}). An OpenAI client of an OpenAI provider gets every {@code x-ratelimit-*}
 * header as it is; a client of another dialect gets the six above as that dialect writes them. Written for an
 * OpenAI client, a reset is rounded up to the whole second, so a client never retries early. Stateless.
 */
enum OpenAiHeaders implements HeaderMapping
{
    INSTANCE;

    private static final String PREFIX = "x-ratelimit-";

    @Override
    public String requestId(Headers upstream)
    {
        return upstream.get("x-request-id");
    }

    @Override
    public boolean relays(String name)
    {
        return name.regionMatches(true, 0, PREFIX, 0, PREFIX.length());
    }

    @Override
    public RateLimits readRateLimits(Headers upstream, Instant now)
    {
        RateLimits limits = new RateLimits(RateLimits.count(upstream.get("x-ratelimit-limit-requests")),
            RateLimits.count(upstream.get("x-ratelimit-remaining-requests")),
            resetAt(upstream.get("x-ratelimit-reset-requests"), now),
            RateLimits.count(upstream.get("x-ratelimit-limit-tokens")),
            RateLimits.count(upstream.get("x-ratelimit-remaining-tokens")),
            resetAt(upstream.get("x-ratelimit-reset-tokens"), now));
        return limits.isEmpty() ? null : limits;
    }

    @Override
    public void writeRateLimits(RateLimits limits, Instant now, BiConsumer<String, String> out)
    {
        write(out, "x-ratelimit-limit-requests", limits.requestsLimit());
        write(out, "x-ratelimit-remaining-requests", limits.requestsRemaining());
        if (limits.requestsReset() != null)
            out.accept("x-ratelimit-reset-requests", durationUntil(limits.requestsReset(), now));
        write(out, "x-ratelimit-limit-tokens", limits.tokensLimit());
        write(out, "x-ratelimit-remaining-tokens", limits.tokensRemaining());
        if (limits.tokensReset() != null)
            out.accept("x-ratelimit-reset-tokens", durationUntil(limits.tokensReset(), now));
    }

    private static void write(BiConsumer<String, String> out, String name, Long count)
    {
        if (count != null)
            out.accept(name, count.toString());
    }

    private static Instant resetAt(String duration, Instant now)
    {
        if (duration == null)
            return null;
        long nanos = parseDuration(duration);
        return nanos < 0 ? null : now.plusNanos(nanos);
    }

    /** @return the time from {@code now} to {@code at} as OpenAI writes it, rounded up to the second; 0s if past */
    static String durationUntil(Instant at, Instant now)
    {
        Duration d = Duration.between(now, at);
        if (d.isNegative())
            return "0s";
        long seconds = d.getSeconds() + (d.getNano() > 0 ? 1 : 0);
        return formatDuration(seconds);
    }

    /**
     * Parses a Go-style duration as OpenAI writes its resets: {@code 1s}, {@code 6m0s}, {@code 120ms},
     * {@code 1h2m3.5s}; units {@code h m s ms us µs ns}, each a decimal number with an optional fraction.
     *
     * @return the duration in nanoseconds, or {@code -1} if {@code value} is not one
     */
    static long parseDuration(String value)
    {
        int i = 0;
        int len = value.length();
        if (len == 0 || len > 40)
            return -1;
        double total = 0;
        while (i < len)
        {
            int start = i;
            while (i < len && (Character.isDigit(value.charAt(i)) || value.charAt(i) == '.'))
                i++;
            if (i == start)
                return -1;
            double number;
            try
            {
                number = Double.parseDouble(value.substring(start, i));
            }
            catch (NumberFormatException e)
            {
                return -1;
            }
            int unitStart = i;
            while (i < len && !Character.isDigit(value.charAt(i)) && value.charAt(i) != '.')
                i++;
            double scale = switch (value.substring(unitStart, i))
            {
                case "h" -> 3.6e12;
                case "m" -> 6e10;
                case "s" -> 1e9;
                case "ms" -> 1e6;
                case "us", "µs" -> 1e3;
                case "ns" -> 1;
                default -> -1;
            };
            if (scale < 0)
                return -1;
            total += number * scale;
        }
        return total > Long.MAX_VALUE / 2 ? -1 : (long)Math.ceil(total);
    }

    /** @return whole seconds the way OpenAI writes them: {@code 0s}, {@code 59s}, {@code 6m0s}, {@code 1h0m5s} */
    static String formatDuration(long seconds)
    {
        long h = seconds / 3600;
        long m = seconds / 60 % 60;
        long s = seconds % 60;
        if (h > 0)
            return h + "h" + m + "m" + s + "s";
        if (m > 0)
            return m + "m" + s + "s";
        return s + "s";
    }
}
