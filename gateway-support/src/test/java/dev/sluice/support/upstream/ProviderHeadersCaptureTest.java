package dev.sluice.support.upstream;

import dev.sluice.api.GatewayException;
import dev.sluice.api.codec.DialectCodec;
import dev.sluice.api.codec.DialectCodec.HeaderMapping;
import dev.sluice.api.codec.DialectCodec.RateLimits;
import dev.sluice.api.codec.RequestPeek;
import dev.sluice.api.codec.StreamDecoder;
import dev.sluice.api.codec.StreamEncoder;
import dev.sluice.api.exchange.Headers;
import dev.sluice.api.exchange.ResponseHeaders;
import dev.sluice.api.model.ChatRequest;
import dev.sluice.api.model.ChatResponse;
import dev.sluice.api.model.Usage;
import dev.sluice.api.testing.TestExchange;
import dev.sluice.api.upstream.BodySource;
import dev.sluice.api.upstream.UpstreamResponse;
import org.junit.jupiter.api.Test;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.function.BiConsumer;
import java.util.function.Supplier;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link ProviderHeaders} applies the dialects' {@link HeaderMapping}s: two third-party dialects that know nothing of
 * each other ("acme" counts requests left, "zeta" spells the same state its own way) map their headers through
 * {@link RateLimits}.
 */
class ProviderHeadersCaptureTest
{
    private static final Instant NOW = Instant.parse("2026-12-01T15:00:00Z");

    /** Acme: {@code acme-request-id}, {@code acme-quota-*}; the reset is in seconds from now. */
    private static final HeaderMapping ACME = new HeaderMapping()
    {
        @Override
        public String requestId(Headers upstream)
        {
            return upstream.get("acme-request-id");
        }

        @Override
        public boolean relays(String name)
        {
            return name.regionMatches(true, 0, "acme-quota-", 0, 11);
        }

        @Override
        public RateLimits readRateLimits(Headers upstream, Instant now)
        {
            Long left = RateLimits.count(upstream.get("acme-quota-requests-left"));
            Long reset = RateLimits.count(upstream.get("acme-quota-reset-seconds"));
            if (left == null && reset == null)
                return null;
            return new RateLimits(null, left, reset == null ? null : now.plusSeconds(reset), null, null, null);
        }

        @Override
        public void writeRateLimits(RateLimits limits, Instant now, BiConsumer<String, String> out)
        {
            if (limits.requestsRemaining() != null)
                out.accept("acme-quota-requests-left", limits.requestsRemaining().toString());
        }
    };

    /** Zeta: writes and reads {@code zeta-requests-remaining} and {@code zeta-requests-reset} (a time). */
    private static final HeaderMapping ZETA = new HeaderMapping()
    {
        @Override
        public RateLimits readRateLimits(Headers upstream, Instant now)
        {
            Long left = RateLimits.count(upstream.get("zeta-requests-remaining"));
            return left == null ? null : new RateLimits(null, left, null, null, null, null);
        }

        @Override
        public void writeRateLimits(RateLimits limits, Instant now, BiConsumer<String, String> out)
        {
            if (limits.requestsRemaining() != null)
                out.accept("zeta-requests-remaining", limits.requestsRemaining().toString());
            if (limits.requestsReset() != null)
                out.accept("zeta-requests-reset", limits.requestsReset().toString());
        }
    };

    private static final String[] ACME_ANSWER = {"Acme-Quota-Requests-Left", "41", "acme-quota-reset-seconds", "30",
        "acme-request-id", "a-1", "retry-after", "2", "retry-after-ms", "2000", "set-cookie", "s=1", "content-type",
        "application/json"};

    private static ResponseHeaders capture(String[] upstream, DialectCodec provider, DialectCodec client)
    {
        return ProviderHeaders.capture(new Fake(upstream), provider, client.dialect(), client, NOW);
    }

    @Test
    void aClientOfTheProvidersDialectGetsTheRelayedHeadersAsTheyAreAndTheRequestId()
    {
        ResponseHeaders h = capture(ACME_ANSWER, codec("acme", ACME), codec("acme", ACME));
        assertThat(names(h)).containsExactly("acme-quota-requests-left", "acme-quota-reset-seconds", "retry-after",
            "retry-after-ms", ProviderHeaders.UPSTREAM_REQUEST_ID);
        assertThat(h.get("acme-quota-requests-left")).isEqualTo("41");
        assertThat(h.get(ProviderHeaders.UPSTREAM_REQUEST_ID)).isEqualTo("a-1");
    }

    @Test
    void aClientOfAnotherDialectGetsTheRateLimitsAsItsOwnDialectWritesThem()
    {
        ResponseHeaders h = capture(ACME_ANSWER, codec("acme", ACME), codec("zeta", ZETA));
        assertThat(h.get("zeta-requests-remaining")).isEqualTo("41");
        assertThat(h.get("zeta-requests-reset")).isEqualTo("2026-12-01T15:00:30Z");
        assertThat(h.get("retry-after")).isEqualTo("2");
        assertThat(h.get(ProviderHeaders.UPSTREAM_REQUEST_ID)).isEqualTo("a-1");
        assertThat(names(h)).noneMatch(n -> n.startsWith("acme-"));

        ResponseHeaders back = capture(new String[] {"zeta-requests-remaining", "7"}, codec("zeta", ZETA),
            codec("acme", ACME));
        assertThat(names(back)).containsExactly("acme-quota-requests-left");
    }

    @Test
    void aDialectWithoutAMappingGetsAndGivesOnlyTheRetryHints()
    {
        DialectCodec plain = codec("plain", HeaderMapping.NONE);
        assertThat(names(capture(ACME_ANSWER, codec("acme", ACME), plain)))
            .containsExactly("retry-after", "retry-after-ms", ProviderHeaders.UPSTREAM_REQUEST_ID);
        assertThat(names(capture(ACME_ANSWER, plain, codec("acme", ACME)))).containsExactly("retry-after", "retry-after-ms");
        assertThat(names(capture(ACME_ANSWER, plain, plain))).containsExactly("retry-after", "retry-after-ms");
    }

    @Test
    void noneOfTheseHeadersCostsNoHeaders()
    {
        assertThat(capture(new String[] {"content-type", "application/json", "acme-quota-requests-left", "many"},
            codec("acme", ACME), codec("zeta", ZETA))).isSameAs(ResponseHeaders.EMPTY);
    }

    @Test
    void countsAreParsedOnlyFromPlainDecimals()
    {
        assertThat(RateLimits.count("150000")).isEqualTo(150000L);
        assertThat(RateLimits.count("-1")).isNull();
        assertThat(RateLimits.count("1e3")).isNull();
        assertThat(RateLimits.count("")).isNull();
        assertThat(RateLimits.count(null)).isNull();
        assertThat(RateLimits.count("1234567890123456789")).isNull();
    }

    private static List<String> names(ResponseHeaders h)
    {
        List<String> names = new ArrayList<>();
        h.forEach((n, v) -> names.add(n));
        return names;
    }

    /** A codec that only names its dialect and its header mapping. */
    private static DialectCodec codec(String dialect, HeaderMapping mapping)
    {
        return new DialectCodec()
        {
            @Override
            public String dialect()
            {
                return dialect;
            }

            @Override
            public HeaderMapping headerMapping()
            {
                return mapping;
            }

            @Override
            public RequestPeek peek(byte[] body)
            {
                throw new UnsupportedOperationException();
            }

            @Override
            public ChatRequest decodeRequest(byte[] body)
            {
                throw new UnsupportedOperationException();
            }

            @Override
            public byte[] encodeRequest(ChatRequest request)
            {
                throw new UnsupportedOperationException();
            }

            @Override
            public ChatResponse decodeResponse(byte[] body)
            {
                throw new UnsupportedOperationException();
            }

            @Override
            public byte[] encodeResponse(ChatResponse response)
            {
                throw new UnsupportedOperationException();
            }

            @Override
            public StreamDecoder newStreamDecoder()
            {
                throw new UnsupportedOperationException();
            }

            @Override
            public StreamEncoder newStreamEncoder(Supplier<ChatRequest> request)
            {
                throw new UnsupportedOperationException();
            }

            @Override
            public byte[] encodeError(GatewayException error)
            {
                throw new UnsupportedOperationException();
            }

            @Override
            public GatewayException decodeError(int status, byte[] body)
            {
                throw new UnsupportedOperationException();
            }

            @Override
            public Usage scanUsage(byte[] body)
            {
                return null;
            }
        };
    }

    /** An upstream response that has only headers. */
    private record Fake(Headers headers) implements UpstreamResponse
    {
        Fake(String[] pairs)
        {
            this(headersOf(pairs));
        }

        private static Headers headersOf(String[] pairs)
        {
            TestExchange exchange = new TestExchange("m");
            for (int i = 0; i < pairs.length; i += 2)
                exchange.header(pairs[i], pairs[i + 1]);
            return exchange.headers();
        }

        @Override
        public int status()
        {
            return 200;
        }

        @Override
        public String header(String name)
        {
            return headers.get(name);
        }

        @Override
        public BodySource body()
        {
            throw new UnsupportedOperationException();
        }
    }
}
