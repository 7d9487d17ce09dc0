package dev.sluice.plugin.anthropic;

import dev.sluice.api.codec.DialectCodec.RateLimits;
import dev.sluice.api.exchange.Headers;
import dev.sluice.api.testing.TestExchange;
import org.junit.jupiter.api.Test;

import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** Anthropic's side of header mapping: its request id, the headers it relays, and its rate limits both ways. */
class AnthropicHeadersTest
{
    private static final Instant NOW = Instant.parse("2026-12-01T15:00:00.250Z");
    private static final Headers ANSWER = headers("anthropic-ratelimit-requests-limit", "50",
        "anthropic-ratelimit-requests-remaining", "49", "anthropic-ratelimit-requests-reset", "2026-12-01T15:00:01Z",
        "anthropic-ratelimit-tokens-limit", "80000", "anthropic-ratelimit-tokens-remaining", "79000",
        "anthropic-ratelimit-tokens-reset", "2026-12-01T16:01:05+00:00", "anthropic-ratelimit-input-tokens-limit",
        "40000", "request-id", "req_2", "x-should-retry", "true");

    @Test
    void theCodecOffersTheMapping()
    {
        assertThat(AnthropicCodec.INSTANCE.headerMapping()).isSameAs(AnthropicHeaders.INSTANCE);
    }

    @Test
    void relaysItsRateLimitHeadersAndRequestIdAndReadsTheId()
    {
        assertThat(AnthropicHeaders.INSTANCE.relays("anthropic-ratelimit-input-tokens-limit")).isTrue();
        assertThat(AnthropicHeaders.INSTANCE.relays("Request-Id")).isTrue();
        assertThat(AnthropicHeaders.INSTANCE.relays("x-should-retry")).isFalse();
        assertThat(AnthropicHeaders.INSTANCE.requestId(ANSWER)).isEqualTo("req_2");
    }

    @Test
    void readsRequestsAndTokensLimitsWithResetTimes()
    {
        assertThat(AnthropicHeaders.INSTANCE.readRateLimits(ANSWER, NOW)).isEqualTo(new RateLimits(50L, 49L,
            Instant.parse("2026-12-01T15:00:01Z"), 80000L, 79000L, Instant.parse("2026-12-01T16:01:05Z")));
    }

    @Test
    void writesResetsAsTimesRoundedUpToTheSecond()
    {
        RateLimits limits = new RateLimits(60L, 0L, Instant.parse("2026-12-01T15:00:01.250Z"), 150000L, 149984L,
            Instant.parse("2026-12-01T15:06:00.250Z"));
        Map<String, String> out = new LinkedHashMap<>();
        AnthropicHeaders.INSTANCE.writeRateLimits(limits, NOW, out::put);
        assertThat(out).containsExactly(Map.entry("anthropic-ratelimit-requests-limit", "60"),
            Map.entry("anthropic-ratelimit-requests-remaining", "0"),
            Map.entry("anthropic-ratelimit-requests-reset", "2026-12-01T15:00:02Z"),
            Map.entry("anthropic-ratelimit-tokens-limit", "150000"),
            Map.entry("anthropic-ratelimit-tokens-remaining", "149984"),
            Map.entry("anthropic-ratelimit-tokens-reset", "2026-12-01T15:06:01Z"));
    }

    @Test
    void unparseableValuesAreLeftOutNotGuessed()
    {
        assertThat(AnthropicHeaders.INSTANCE.readRateLimits(headers("anthropic-ratelimit-tokens-reset", "tomorrow",
            "anthropic-ratelimit-tokens-limit", "lots"), NOW)).isNull();
    }

    private static Headers headers(String... pairs)
    {
        TestExchange exchange = new TestExchange("m");
        for (int i = 0; i < pairs.length; i += 2)
            exchange.header(pairs[i], pairs[i + 1]);
        return exchange.headers();
    }
}
