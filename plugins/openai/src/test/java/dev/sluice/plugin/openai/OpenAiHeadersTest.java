package dev.sluice.plugin.openai;

import dev.sluice.api.codec.DialectCodec.RateLimits;
import dev.sluice.api.exchange.Headers;
import dev.sluice.api.testing.TestExchange;
import org.junit.jupiter.api.Test;

import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** OpenAI's side of header mapping: its request id, the headers it relays, and its rate limits both ways. */
class OpenAiHeadersTest
{
    private static final Instant NOW = Instant.parse("2026-12-01T15:00:00.250Z");
    private static final Headers ANSWER = headers("X-RateLimit-Limit-Requests", "60", "x-ratelimit-remaining-requests", "0",
        "x-ratelimit-reset-requests", "1s", "x-ratelimit-limit-tokens", "150000", "x-ratelimit-remaining-tokens",
        "149984", "x-ratelimit-reset-tokens", "6m0s", "x-request-id", "req_1", "openai-processing-ms", "12");

    @Test
    void theCodecOffersTheMapping()
    {
        assertThat(OpenAiCodec.INSTANCE.headerMapping()).isSameAs(OpenAiHeaders.INSTANCE);
    }

    @Test
    void relaysItsRateLimitHeadersAndReadsItsRequestId()
    {
        assertThat(OpenAiHeaders.INSTANCE.relays("X-RateLimit-Reset-Tokens")).isTrue();
        assertThat(OpenAiHeaders.INSTANCE.relays("x-request-id")).isFalse();
        assertThat(OpenAiHeaders.INSTANCE.relays("openai-processing-ms")).isFalse();
        assertThat(OpenAiHeaders.INSTANCE.requestId(ANSWER)).isEqualTo("req_1");
    }

    @Test
    void readsResetDurationsAsTimes()
    {
        RateLimits limits = OpenAiHeaders.INSTANCE.readRateLimits(ANSWER, NOW);
        assertThat(limits).isEqualTo(new RateLimits(60L, 0L, Instant.parse("2026-12-01T15:00:01.250Z"), 150000L,
            149984L, Instant.parse("2026-12-01T15:06:00.250Z")));
    }

    @Test
    void writesResetTimesAsDurationsRoundedUpToTheSecond()
    {
        RateLimits limits = new RateLimits(50L, 49L, Instant.parse("2026-12-01T15:00:01Z"), 80000L, 79000L,
            Instant.parse("2026-12-01T16:01:05Z"));
        Map<String, String> out = new LinkedHashMap<>();
        OpenAiHeaders.INSTANCE.writeRateLimits(limits, NOW, out::put);
        assertThat(out).containsExactly(Map.entry("x-ratelimit-limit-requests", "50"),
            Map.entry("x-ratelimit-remaining-requests", "49"), Map.entry("x-ratelimit-reset-requests", "1s"),
            Map.entry("x-ratelimit-limit-tokens", "80000"), Map.entry("x-ratelimit-remaining-tokens", "79000"),
            Map.entry("x-ratelimit-reset-tokens", "1h1m5s"));
    }

    @Test
    void unparseableValuesAreLeftOutNotGuessed()
    {
        assertThat(OpenAiHeaders.INSTANCE.readRateLimits(headers("x-ratelimit-limit-requests", "many",
            "x-ratelimit-reset-tokens", "soon", "x-ratelimit-reset-requests", "-1s"), NOW)).isNull();
        Map<String, String> out = new LinkedHashMap<>();
        OpenAiHeaders.INSTANCE.writeRateLimits(new RateLimits(null, 3L, null, null, null, null), NOW, out::put);
        assertThat(out).containsExactly(Map.entry("x-ratelimit-remaining-requests", "3"));
    }

    @Test
    void parsesAndFormatsGoDurations()
    {
        assertThat(OpenAiHeaders.parseDuration("6m0s")).isEqualTo(360_000_000_000L);
        assertThat(OpenAiHeaders.parseDuration("120ms")).isEqualTo(120_000_000L);
        assertThat(OpenAiHeaders.parseDuration("1h2m3.5s")).isEqualTo(3_723_500_000_000L);
        assertThat(OpenAiHeaders.parseDuration("7.66s")).isEqualTo(7_660_000_000L);
        assertThat(OpenAiHeaders.parseDuration("")).isEqualTo(-1);
        assertThat(OpenAiHeaders.parseDuration("5 s")).isEqualTo(-1);
        assertThat(OpenAiHeaders.parseDuration("5d")).isEqualTo(-1);
        assertThat(OpenAiHeaders.formatDuration(0)).isEqualTo("0s");
        assertThat(OpenAiHeaders.formatDuration(360)).isEqualTo("6m0s");
        assertThat(OpenAiHeaders.formatDuration(3605)).isEqualTo("1h0m5s");
        assertThat(OpenAiHeaders.durationUntil(Instant.parse("2026-12-01T15:00:00Z"), NOW)).isEqualTo("0s");
    }

    private static Headers headers(String... pairs)
    {
        TestExchange exchange = new TestExchange("m");
        for (int i = 0; i < pairs.length; i += 2)
            exchange.header(pairs[i], pairs[i + 1]);
        return exchange.headers();
    }
}
