package dev.sluice.support.upstream;

import dev.sluice.api.upstream.UpstreamRequest;
import dev.sluice.api.exchange.Attributes;
import dev.sluice.api.testing.TestExchange;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

class UpstreamHeadersTest
{
    private static final List<Map.Entry<String, String>> FIXED = List.of(Map.entry("Authorization", "Bearer sk"),
        Map.entry("X-Version", "2"));

    @Test
    void withoutForwardedHeadersEveryRequestSharesOneImmutableList()
    {
        UpstreamHeaders headers = new UpstreamHeaders(FIXED, "application/json", "text/event-stream", Set.of());
        TestExchange exchange = new TestExchange("m").header("X-Request-Id", "r1");

        List<Map.Entry<String, String>> plain = headers.of(false, exchange);

        assertThat(plain).containsExactly(Map.entry("Authorization", "Bearer sk"), Map.entry("X-Version", "2"),
            Map.entry("Accept", "application/json"));
        assertThat(headers.of(false, new TestExchange("n"))).isSameAs(plain);
        assertThat(headers.of(true, exchange)).endsWith(Map.entry("Accept", "text/event-stream"));
        assertThat(new UpstreamRequest("POST", "/", plain, null, null).headers()).as("kept without a copy").isSameAs(plain);
    }

    @Test
    void forwardedHeadersAreTheSameAsUpstreamRepliesHeadersGives()
    {
        Set<String> forward = Set.of("x-request-id", "x-trace");
        UpstreamHeaders headers = new UpstreamHeaders(FIXED, "application/json", "text/event-stream", forward);
        TestExchange exchange = new TestExchange("m").header("X-Request-Id", "r1").header("User-Agent", "sdk")
            .header("x-trace", "a").header("X-Trace", "b");

        List<Map.Entry<String, String>> sent = headers.of(true, exchange);

        assertThat(sent).isEqualTo(UpstreamReplies.headers(FIXED, "text/event-stream", forward, exchange));
        assertThat(sent).containsSubsequence(Map.entry("Accept", "text/event-stream"), Map.entry("x-request-id", "r1"));
        assertThat(sent).contains(Map.entry("x-trace", "a"), Map.entry("x-trace", "b")).hasSize(6);
        assertThat(headers.of(true, new TestExchange("m").header("User-Agent", "sdk")))
            .as("none of them present: the shared list").isSameAs(headers.of(true, new TestExchange("n")));
    }

    @Test
    void forwardedNamesMatchInAnyCase()
    {
        UpstreamHeaders headers = new UpstreamHeaders(List.of(), "a", "b", Set.of("X-Request-ID"));

        assertThat(headers.of(false, new TestExchange("m").header("x-request-id", "r1")))
            .containsExactly(Map.entry("Accept", "a"), Map.entry("x-request-id", "r1"));
    }

    private static final String TRACEPARENT = "00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01";

    @Test
    void propagatingTraceAppendsTheExchangesTraceparentInPlaceOfTheClients()
    {
        UpstreamHeaders headers = new UpstreamHeaders(FIXED, "application/json", "text/event-stream",
            Set.of("x-request-id", "traceparent", "tracestate")).propagatingTrace();
        TestExchange exchange = new TestExchange("m").header("X-Request-Id", "r1")
            .header("traceparent", "00-11111111111111111111111111111111-2222222222222222-01").header("tracestate", "v=1");
        exchange.attribute(Attributes.TRACEPARENT, TRACEPARENT);

        assertThat(headers.of(false, exchange)).containsExactly(Map.entry("Authorization", "Bearer sk"),
            Map.entry("X-Version", "2"), Map.entry("Accept", "application/json"), Map.entry("x-request-id", "r1"),
            Map.entry("traceparent", TRACEPARENT));
    }

    @Test
    void theCallersTraceStateGoesWithTheTraceparentAndAMalformedOneStaysBehind()
    {
        UpstreamHeaders headers = new UpstreamHeaders(FIXED, "application/json", "text/event-stream",
            Set.of("tracestate")).propagatingTrace();
        TestExchange exchange = new TestExchange("m").header("tracestate", "client=own");
        exchange.attribute(Attributes.TRACEPARENT, TRACEPARENT);
        exchange.attribute(Attributes.TRACESTATE, "rojo=00f067aa0ba902b7,congo=t61rcWkgMzE");
        TestExchange smuggling = new TestExchange("m");
        smuggling.attribute(Attributes.TRACEPARENT, TRACEPARENT);
        smuggling.attribute(Attributes.TRACESTATE, "rojo=1\r\nx-evil: 1");
        TestExchange tooLong = new TestExchange("m");
        tooLong.attribute(Attributes.TRACEPARENT, TRACEPARENT);
        tooLong.attribute(Attributes.TRACESTATE, "k=" + "v".repeat(511));
        TestExchange stateAlone = new TestExchange("m");
        stateAlone.attribute(Attributes.TRACESTATE, "rojo=1");

        assertThat(headers.of(false, exchange)).containsExactly(Map.entry("Authorization", "Bearer sk"),
            Map.entry("X-Version", "2"), Map.entry("Accept", "application/json"), Map.entry("traceparent", TRACEPARENT),
            Map.entry("tracestate", "rojo=00f067aa0ba902b7,congo=t61rcWkgMzE"));
        assertThat(headers.of(false, smuggling)).endsWith(Map.entry("traceparent", TRACEPARENT));
        assertThat(headers.of(false, tooLong)).endsWith(Map.entry("traceparent", TRACEPARENT));
        assertThat(headers.of(false, stateAlone)).as("no traceparent, no trace state of the gateway's")
            .doesNotContain(Map.entry("tracestate", "rojo=1"));
    }

    @Test
    void propagatingTraceWithoutTheAttributeOrWithAMalformedOneSendsWhatTheBindingSendsWithoutIt()
    {
        UpstreamHeaders plain = new UpstreamHeaders(FIXED, "application/json", "text/event-stream", Set.of());
        UpstreamHeaders tracing = plain.propagatingTrace();
        TestExchange none = new TestExchange("m");
        TestExchange malformed = new TestExchange("m");
        malformed.attribute(Attributes.TRACEPARENT, TRACEPARENT.replace("-01", "-01\r\nx-evil: 1"));

        assertThat(tracing.of(true, none)).isSameAs(plain.of(true, none));
        assertThat(tracing.of(true, malformed)).isSameAs(plain.of(true, malformed));
        assertThat(tracing.propagatingTrace()).isSameAs(tracing);
    }

    @Test
    void withoutPropagatingTraceTheAttributeNeverLeaves()
    {
        UpstreamHeaders headers = new UpstreamHeaders(FIXED, "application/json", "text/event-stream", Set.of());
        TestExchange exchange = new TestExchange("m");
        exchange.attribute(Attributes.TRACEPARENT, TRACEPARENT);

        assertThat(headers.of(false, exchange)).extracting(Map.Entry::getKey).doesNotContain("traceparent");
    }
}
