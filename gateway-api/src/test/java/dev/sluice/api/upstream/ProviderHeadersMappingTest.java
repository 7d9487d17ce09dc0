package dev.sluice.api.upstream;

import dev.sluice.api.exchange.Headers;
import dev.sluice.api.exchange.ResponseHeaders;
import dev.sluice.api.upstream.ProviderHeaders.Scheme;
import org.junit.jupiter.api.Test;

import java.time.Instant;
import java.util.List;
import java.util.function.BiConsumer;

import static org.assertj.core.api.Assertions.assertThat;

/** The allow-list and the OpenAI ↔ Anthropic mapping of {@link ProviderHeaders}, at a fixed time. */
class ProviderHeadersMappingTest
{
    private static final Instant NOW = Instant.parse("2026-12-01T15:00:00.250Z");

    private static final String[] OPENAI = {"X-RateLimit-Limit-Requests", "60", "x-ratelimit-remaining-requests", "0",
        "x-ratelimit-reset-requests", "1s", "x-ratelimit-limit-tokens", "150000", "x-ratelimit-remaining-tokens",
        "149984", "x-ratelimit-reset-tokens", "6m0s", "x-request-id", "req_1", "retry-after", "1", "retry-after-ms",
        "1000", "content-type", "application/json", "openai-processing-ms", "12", "set-cookie", "a=b"};
    private static final String[] ANTHROPIC = {"anthropic-ratelimit-requests-limit", "50",
        "anthropic-ratelimit-requests-remaining", "49", "anthropic-ratelimit-requests-reset", "2026-12-01T15:00:01Z",
        "anthropic-ratelimit-tokens-limit", "80000", "anthropic-ratelimit-tokens-remaining", "79000",
        "anthropic-ratelimit-tokens-reset", "2026-12-01T16:01:05+00:00", "anthropic-ratelimit-input-tokens-limit",
        "40000", "request-id", "req_2", "retry-after", "3", "x-should-retry", "true"};

    private static ResponseHeaders capture(String[] upstream, Scheme provider, Scheme client)
    {
        return ProviderHeaders.capture(new Fake(upstream), provider, client, NOW);
    }

    @Test
    void sameSchemePassesTheProvidersHeadersUnderTheirOwnNamesAndNothingElse()
    {
        ResponseHeaders openai = capture(OPENAI, Scheme.OPENAI, Scheme.OPENAI);
        assertThat(openai.get("x-ratelimit-limit-requests")).isEqualTo("60");
        assertThat(openai.get("x-ratelimit-reset-tokens")).isEqualTo("6m0s");
        assertThat(openai.get("retry-after")).isEqualTo("1");
        assertThat(openai.get("retry-after-ms")).isEqualTo("1000");
        assertThat(openai.get("x-request-id")).isNull();
        assertThat(openai.get(ProviderHeaders.UPSTREAM_REQUEST_ID)).isEqualTo("req_1");
        assertThat(openai.get("set-cookie")).isNull();
        assertThat(openai.get("openai-processing-ms")).isNull();
        assertThat(openai.size()).isEqualTo(9);

        ResponseHeaders anthropic = capture(ANTHROPIC, Scheme.ANTHROPIC, Scheme.ANTHROPIC);
        assertThat(anthropic.get("anthropic-ratelimit-tokens-reset")).isEqualTo("2026-12-01T16:01:05+00:00");
        assertThat(anthropic.get("anthropic-ratelimit-input-tokens-limit")).isEqualTo("40000");
        assertThat(anthropic.get("request-id")).isEqualTo("req_2");
        assertThat(anthropic.get(ProviderHeaders.UPSTREAM_REQUEST_ID)).isEqualTo("req_2");
        assertThat(anthropic.get("x-should-retry")).isNull();
    }

    @Test
    void openAiLimitsBecomeAnthropicsWithResetsAsTimes()
    {
        ResponseHeaders h = capture(OPENAI, Scheme.OPENAI, Scheme.ANTHROPIC);
        assertThat(h.get("anthropic-ratelimit-requests-limit")).isEqualTo("60");
        assertThat(h.get("anthropic-ratelimit-requests-remaining")).isEqualTo("0");
        // Rounded up to the next second: never earlier than the provider said.
        assertThat(h.get("anthropic-ratelimit-requests-reset")).isEqualTo("2026-12-01T15:00:02Z");
        assertThat(h.get("anthropic-ratelimit-tokens-reset")).isEqualTo("2026-12-01T15:06:01Z");
        assertThat(h.get("retry-after")).isEqualTo("1");
        assertThat(h.get("request-id")).isNull();
        assertThat(h.get(ProviderHeaders.UPSTREAM_REQUEST_ID)).isEqualTo("req_1");
        assertThat(names(h)).noneMatch(n -> n.startsWith("x-ratelimit-"));
    }

    @Test
    void anthropicLimitsBecomeOpenAisWithResetsAsDurationsAndSeparateInputOutputLimitsDropped()
    {
        ResponseHeaders h = capture(ANTHROPIC, Scheme.ANTHROPIC, Scheme.OPENAI);
        assertThat(h.get("x-ratelimit-limit-requests")).isEqualTo("50");
        assertThat(h.get("x-ratelimit-remaining-tokens")).isEqualTo("79000");
        assertThat(h.get("x-ratelimit-reset-requests")).isEqualTo("1s");
        assertThat(h.get("x-ratelimit-reset-tokens")).isEqualTo("1h1m5s");
        assertThat(h.get("retry-after")).isEqualTo("3");
        assertThat(h.get("request-id")).isNull();
        assertThat(names(h)).noneMatch(n -> n.startsWith("anthropic-"));
        assertThat(h.size()).isEqualTo(8);
    }

    @Test
    void otherDialectsGetOnlyRetryHintsAndTheRequestId()
    {
        ResponseHeaders h = capture(OPENAI, Scheme.OPENAI, Scheme.NONE);
        assertThat(names(h)).containsExactlyInAnyOrder("retry-after", "retry-after-ms", ProviderHeaders.UPSTREAM_REQUEST_ID);
        assertThat(names(capture(ANTHROPIC, Scheme.NONE, Scheme.OPENAI))).containsExactly("retry-after");
    }

    @Test
    void unparseableValuesAreDroppedNotGuessed()
    {
        ResponseHeaders h = capture(new String[] {"x-ratelimit-limit-requests", "many", "x-ratelimit-reset-tokens",
            "soon", "x-ratelimit-reset-requests", "-1s"}, Scheme.OPENAI, Scheme.ANTHROPIC);
        assertThat(h.isEmpty()).isTrue();
        assertThat(capture(new String[] {"anthropic-ratelimit-tokens-reset", "tomorrow"}, Scheme.ANTHROPIC,
            Scheme.OPENAI)).isSameAs(ResponseHeaders.EMPTY);
    }

    @Test
    void noneOfTheseHeadersCostsNoHeaders()
    {
        assertThat(capture(new String[] {"content-type", "application/json", "date", "x"}, Scheme.OPENAI, Scheme.OPENAI))
            .isSameAs(ResponseHeaders.EMPTY);
    }

    @Test
    void parsesAndFormatsGoDurations()
    {
        assertThat(ProviderHeaders.parseDuration("6m0s")).isEqualTo(360_000_000_000L);
        assertThat(ProviderHeaders.parseDuration("120ms")).isEqualTo(120_000_000L);
        assertThat(ProviderHeaders.parseDuration("1h2m3.5s")).isEqualTo(3_723_500_000_000L);
        assertThat(ProviderHeaders.parseDuration("7.66s")).isEqualTo(7_660_000_000L);
        assertThat(ProviderHeaders.parseDuration("")).isEqualTo(-1);
        assertThat(ProviderHeaders.parseDuration("5 s")).isEqualTo(-1);
        assertThat(ProviderHeaders.parseDuration("5d")).isEqualTo(-1);
        assertThat(ProviderHeaders.formatDuration(0)).isEqualTo("0s");
        assertThat(ProviderHeaders.formatDuration(360)).isEqualTo("6m0s");
        assertThat(ProviderHeaders.formatDuration(3605)).isEqualTo("1h0m5s");
    }

    private static List<String> names(ResponseHeaders h)
    {
        List<String> names = new java.util.ArrayList<>();
        h.forEach((n, v) -> names.add(n));
        return names;
    }

    /** An upstream response that has only headers. */
    private record Fake(String[] pairs) implements UpstreamResponse, Headers
    {
        @Override
        public int status()
        {
            return 200;
        }

        @Override
        public String header(String name)
        {
            return get(name);
        }

        @Override
        public BodySource body()
        {
            throw new UnsupportedOperationException();
        }

        @Override
        public Headers headers()
        {
            return this;
        }

        @Override
        public String get(String name)
        {
            for (int i = 0; i < pairs.length; i += 2)
            {
                if (pairs[i].equalsIgnoreCase(name))
                    return pairs[i + 1];
            }
            return null;
        }

        @Override
        public List<String> getAll(String name)
        {
            String v = get(name);
            return v == null ? List.of() : List.of(v);
        }

        @Override
        public void forEach(BiConsumer<String, String> action)
        {
            for (int i = 0; i < pairs.length; i += 2)
                action.accept(pairs[i], pairs[i + 1]);
        }
    }
}
