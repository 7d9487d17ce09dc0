package dev.sluice.plugin.anthropic;

import dev.sluice.api.codec.DialectCodec.HeaderMapping;
import dev.sluice.api.codec.DialectCodec.RateLimits;
import dev.sluice.api.exchange.Headers;

import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.format.DateTimeParseException;
import java.time.temporal.ChronoUnit;
import java.util.function.BiConsumer;

/**
 * Anthropic's response headers for {@link HeaderMapping}: the request id in {@code request-id}, and the rate limits
 * in {@code anthropic-ratelimit-{requests,tokens}-{limit,remaining,reset}}, each reset an RFC 3339 time. An
 * Anthropic client of an Anthropic provider gets every {@code anthropic-ratelimit-*} header and {@code request-id} as
 * they are; a client of another dialect gets the requests and tokens limits as that dialect writes them (the separate
 * {@code input-tokens-*} and {@code output-tokens-*} limits have no neutral form). Written for an Anthropic client, a
 * reset is rounded up to the whole second, so a client never retries early. Stateless.
 */
enum AnthropicHeaders implements HeaderMapping
{
    INSTANCE;

    private static final String PREFIX = "anthropic-ratelimit-";

    @Override
    public String requestId(Headers upstream)
    {
        return upstream.get("request-id");
    }

    @Override
    public boolean relays(String name)
    {
        return name.regionMatches(true, 0, PREFIX, 0, PREFIX.length()) || name.equalsIgnoreCase("request-id");
    }

    @Override
    public RateLimits readRateLimits(Headers upstream, Instant now)
    {
        RateLimits limits = new RateLimits(RateLimits.count(upstream.get("anthropic-ratelimit-requests-limit")),
            RateLimits.count(upstream.get("anthropic-ratelimit-requests-remaining")),
            time(upstream.get("anthropic-ratelimit-requests-reset")),
            RateLimits.count(upstream.get("anthropic-ratelimit-tokens-limit")),
            RateLimits.count(upstream.get("anthropic-ratelimit-tokens-remaining")),
            time(upstream.get("anthropic-ratelimit-tokens-reset")));
        return limits.isEmpty() ? null : limits;
    }

    @Override
    public void writeRateLimits(RateLimits limits, Instant now, BiConsumer<String, String> out)
    {
        write(out, "anthropic-ratelimit-requests-limit", limits.requestsLimit());
        write(out, "anthropic-ratelimit-requests-remaining", limits.requestsRemaining());
        if (limits.requestsReset() != null)
            out.accept("anthropic-ratelimit-requests-reset", roundUp(limits.requestsReset()).toString());
        write(out, "anthropic-ratelimit-tokens-limit", limits.tokensLimit());
        write(out, "anthropic-ratelimit-tokens-remaining", limits.tokensRemaining());
        if (limits.tokensReset() != null)
            out.accept("anthropic-ratelimit-tokens-reset", roundUp(limits.tokensReset()).toString());
    }

    private static void write(BiConsumer<String, String> out, String name, Long count)
    {
        if (count != null)
            out.accept(name, count.toString());
    }

    private static Instant roundUp(Instant at)
    {
        return at.getNano() == 0 ? at : at.truncatedTo(ChronoUnit.SECONDS).plusSeconds(1);
    }

    private static Instant time(String value)
    {
        if (value == null)
            return null;
        try
        {
            return OffsetDateTime.parse(value).toInstant();
        }
        catch (DateTimeParseException e)
        {
            return null;
        }
    }
}
