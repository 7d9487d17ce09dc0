package dev.sluice.plugin.metrics;

import com.fasterxml.jackson.databind.JsonNode;
import dev.sluice.api.ErrorKind;
import dev.sluice.api.admin.AdminRoutes.AdminRequest;
import dev.sluice.api.admin.AdminRoutes.AdminResponse;
import dev.sluice.api.binding.BindingConfig;
import dev.sluice.api.binding.BindingConfig.BindingKind;
import dev.sluice.api.exchange.Attributes;
import dev.sluice.api.exchange.Completion;
import dev.sluice.api.exchange.Completion.CompletionListener;
import dev.sluice.api.exchange.Headers;
import dev.sluice.api.exchange.Exchange.Stage;
import dev.sluice.support.json.Json;
import dev.sluice.api.model.Usage;
import dev.sluice.api.binding.BindingContext.RuntimeStats;
import dev.sluice.api.testing.Exposition;
import dev.sluice.api.exchange.Exchange.Attempt;
import dev.sluice.api.testing.TestAttempt;
import dev.sluice.api.testing.TestBindingContext;
import dev.sluice.api.testing.TestCompletion;
import dev.sluice.api.testing.TestExchange;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.function.BiConsumer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

/**
 * What the listener counts for each kind of completion, read back through the admin endpoint as a scraper reads it.
 * The end-to-end version, with the runtime's own completions, is gateway-runtime's {@code MetricsPluginTest}.
 */
class MetricsBindingTest
{
    private final TestBindingContext context = new TestBindingContext("next");
    private CompletionListener listener;

    private void create(String optionsJson) throws Exception
    {
        JsonNode options = Json.MAPPER.readTree(optionsJson);
        new MetricsFactory().create(new BindingConfig("m", "metrics", BindingKind.PROXY, options, "next", List.of()), context);
        listener = context.completionListeners().get(0);
    }

    private AdminResponse get(String path, String query, String accept) throws Exception
    {
        return get(context, path, query, accept);
    }

    private static AdminResponse get(TestBindingContext context, String path, String query, String accept) throws Exception
    {
        Headers headers = new Headers()
        {
            @Override
            public String get(String name)
            {
                return name.equalsIgnoreCase("accept") ? accept : null;
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
                if (accept != null)
                    action.accept("accept", accept);
            }
        };
        return context.adminRoutes().get("GET " + path).handle(new AdminRequest("GET", path, query, headers, new byte[0]))
            .toCompletableFuture().get();
    }

    private Exposition scrape() throws Exception
    {
        AdminResponse r = get("/metrics", null, null);
        assertThat(r.status()).isEqualTo(200);
        assertThat(r.contentType()).isEqualTo("text/plain; version=0.0.4; charset=utf-8");
        return Exposition.parse(new String(r.body(), StandardCharsets.UTF_8));
    }

    @Test
    void countsHitsFromTheSharedLevelApart() throws Exception
    {
        create("{\"models\":[\"gpt-*\"],\"jvm\":false}");
        TestCompletion memory = TestCompletion.served();
        memory.exchange = new TestExchange("gpt-4o");
        memory.exchange.attribute(Attributes.CACHE, "hit");
        memory.exchange.attribute(Attributes.CACHE_LEVEL, "memory");
        TestCompletion shared = TestCompletion.served();
        shared.exchange = new TestExchange("gpt-4o");
        shared.exchange.attribute(Attributes.CACHE, "hit");
        shared.exchange.attribute(Attributes.CACHE_LEVEL, "redis");
        TestCompletion miss = TestCompletion.served();
        miss.exchange = new TestExchange("gpt-4o");
        miss.exchange.attribute(Attributes.CACHE, "miss");

        listener.completed(memory);
        listener.completed(shared);
        listener.completed(shared);
        listener.completed(miss);

        Exposition e = scrape();
        assertThat(e.value("sluice_cache_requests_total", "server", "north", "model", "gpt-4o", "result", "hit")).isEqualTo(3);
        assertThat(e.value("sluice_cache_shared_hits_total", "server", "north", "model", "gpt-4o")).isEqualTo(2);
    }

    @Test
    void countsAnAnswerWithItsTokensCostCacheAndLatencies() throws Exception
    {
        create("{\"models\":[\"gpt-*\"],\"jvm\":false}");
        TestCompletion c = TestCompletion.served();
        c.usage = new Usage(10, 5, 2, 0, 0);
        c.exchange = new TestExchange("gpt-4o");
        c.exchange.attribute(Attributes.COST_USD, 0.25);
        c.exchange.attribute(Attributes.CACHE, "miss");

        listener.completed(c);
        listener.completed(c);

        Exposition e = scrape();
        assertThat(e.value("sluice_requests_total", "server", "north", "route", "south", "model", "gpt-4o", "status", "200",
            "outcome", "completed")).isEqualTo(2);
        assertThat(e.types).containsEntry("sluice_requests_total", "counter")
            .containsEntry("sluice_request_duration_seconds", "histogram");
        assertThat(e.value("sluice_input_tokens_total", "route", "south", "model", "gpt-4o")).isEqualTo(20);
        assertThat(e.value("sluice_output_tokens_total", "route", "south", "model", "gpt-4o")).isEqualTo(10);
        assertThat(e.value("sluice_cached_input_tokens_total", "route", "south", "model", "gpt-4o")).isEqualTo(4);
        assertThat(e.value("sluice_cost_usd_total", "route", "south", "model", "gpt-4o")).isEqualTo(0.5);
        assertThat(e.value("sluice_cache_requests_total", "server", "north", "model", "gpt-4o", "result", "miss")).isEqualTo(2);
        assertThat(e.samples("sluice_errors_total")).isEmpty();
        // Total 2.03 ms; the provider 2.0 ms (send to the end of its body): the gateway added 30 µs.
        assertThat(e.value("sluice_gateway_overhead_seconds_count", "server", "north", "route", "south")).isEqualTo(2);
        assertThat(e.value("sluice_gateway_overhead_seconds_sum", "server", "north", "route", "south")).isCloseTo(60e-6, within(1e-12));
        assertThat(e.value("sluice_gateway_overhead_seconds_bucket", "server", "north", "route", "south", "le", "2.5E-5")).isZero();
        assertThat(e.value("sluice_gateway_overhead_seconds_bucket", "server", "north", "route", "south", "le", "5.0E-5")).isEqualTo(2);
        assertThat(e.value("sluice_request_duration_seconds_sum", "server", "north", "route", "south", "model", "gpt-4o"))
            .isCloseTo(2 * 2.03e-3, within(1e-12));
        assertThat(e.value("sluice_upstream_first_byte_seconds_sum", "route", "south", "model", "gpt-4o")).isCloseTo(2e-3, within(1e-12));
        assertThat(e.value("sluice_upstream_duration_seconds_sum", "route", "south", "model", "gpt-4o")).isCloseTo(4e-3, within(1e-12));
        assertThat(e.samples("sluice_time_to_first_token_seconds_count")).as("no stream").isEmpty();
        assertThat(e.samples("sluice_upstream_duration_seconds_bucket", "route", "south")).as("21 bounds and +Inf").hasSize(22);
    }

    @Test
    void countsRequestsALimitsBindingCouldNotCheckAgainstItsSharedStore() throws Exception
    {
        create("{\"jvm\":false}");
        for (String outcome : new String[] {"fail_open", "fail_open", "fail_closed", "made_up"})
        {
            TestCompletion c = TestCompletion.served();
            c.exchange = new TestExchange("gpt-4o");
            c.exchange.attribute(MetricsBinding.LIMITS_STORE_UNAVAILABLE, outcome);
            c.exchange.attribute(MetricsBinding.LIMITS_STORE_UNAVAILABLE_BINDING, "shared_limits");
            listener.completed(c);
        }
        TestCompletion fine = TestCompletion.served();
        fine.exchange = new TestExchange("gpt-4o");
        listener.completed(fine);

        Exposition e = scrape();
        assertThat(e.value("sluice_limits_store_unavailable_total", "binding", "shared_limits", "outcome", "fail_open"))
            .isEqualTo(2);
        assertThat(e.value("sluice_limits_store_unavailable_total", "binding", "shared_limits", "outcome", "fail_closed"))
            .isEqualTo(1);
        assertThat(e.labelValues("sluice_limits_store_unavailable_total", "outcome"))
            .containsExactlyInAnyOrder("fail_open", "fail_closed");
    }

    @Test
    void countsAttemptsByTargetAndTheTokensOfThoseThatFailedOrWereCancelled() throws Exception
    {
        create("{\"jvm\":false}");
        // Cancelled with tokens (the route's deadline passed mid-stream), then a retry at the same target, then a
        // fallback that answered.
        TestAttempt cancelled = TestAttempt.failed(1, "south_a", 200, ErrorKind.UPSTREAM_TIMEOUT);
        cancelled.result = Attempt.Result.CANCELLED;
        cancelled.usage = new Usage(100, 7, 0, 0, 0);
        TestAttempt failed = TestAttempt.failed(2, "south_a", 503, ErrorKind.UPSTREAM_ERROR);
        TestAttempt answered = TestAttempt.answered(3, "south_b");
        TestCompletion fellBack = TestCompletion.served();
        fellBack.route = "south_b";
        fellBack.exchange = new TestExchange("gpt-4o").attempts(cancelled, failed, answered);
        // A retry at the same target that answered: no fallback.
        TestCompletion retried = TestCompletion.served();
        retried.route = "south_a";
        retried.exchange = new TestExchange("gpt-4o").attempts(TestAttempt.failed(1, "south_a", 429, ErrorKind.RATE_LIMITED),
            TestAttempt.answered(2, "south_a"));
        // One attempt that failed and was not retried: the budget was spent.
        TestCompletion refused = TestCompletion.served();
        refused.status = 500;
        refused.errorKind = ErrorKind.UPSTREAM_ERROR;
        refused.exchange = new TestExchange("gpt-4o").attempts(TestAttempt.failed(1, "south", 500, ErrorKind.UPSTREAM_ERROR));
        refused.exchange.attribute(MetricsBinding.RETRY_REFUSED, "budget");

        listener.completed(fellBack);
        listener.completed(retried);
        listener.completed(refused);

        Exposition e = scrape();
        assertThat(e.value("sluice_upstream_attempts_total", "route", "south_a", "result", "cancelled")).isEqualTo(1);
        assertThat(e.value("sluice_upstream_attempts_total", "route", "south_a", "result", "failed")).isEqualTo(2);
        assertThat(e.value("sluice_upstream_attempts_total", "route", "south_a", "result", "answered")).isEqualTo(1);
        assertThat(e.value("sluice_upstream_attempts_total", "route", "south_b", "result", "answered")).isEqualTo(1);
        assertThat(e.value("sluice_upstream_attempts_total", "route", "south", "result", "failed")).isEqualTo(1);
        assertThat(e.value("sluice_retries_total", "route", "south_a")).isEqualTo(2);
        assertThat(e.value("sluice_retries_total", "route", "south_b")).isEqualTo(1);
        assertThat(e.value("sluice_fallbacks_total", "route", "south_b")).isEqualTo(1);
        assertThat(e.samples("sluice_fallbacks_total", "route", "south_a")).as("answered where it started").isEmpty();
        assertThat(e.value("sluice_retry_budget_refusals_total")).isEqualTo(1);
        assertThat(e.value("sluice_failed_attempt_tokens_total", "route", "south_a", "type", "input")).isEqualTo(100);
        assertThat(e.value("sluice_failed_attempt_tokens_total", "route", "south_a", "type", "output")).isEqualTo(7);
        assertThat(e.labelValues("sluice_failed_attempt_tokens_total", "route")).containsExactly("south_a");
    }

    @Test
    void countsAStreamsTimeToFirstTokenAndItsGaps() throws Exception
    {
        create("{\"models\":[\"gpt-*\"],\"jvm\":false}");
        TestCompletion c = TestCompletion.served();
        c.stream = true;
        c.events = 11;
        c.maxEventGapNanos = 300_000;
        c.at(Stage.FIRST_EVENT, 1_030);

        listener.completed(c);
        c.outcome = Completion.Outcome.CLIENT_GONE;
        c.status = 200;
        listener.completed(c);

        Exposition e = scrape();
        assertThat(e.value("sluice_time_to_first_token_seconds_count", "route", "south", "model", "gpt-4o")).isEqualTo(2);
        assertThat(e.value("sluice_time_to_first_token_seconds_sum", "route", "south", "model", "gpt-4o"))
            .isCloseTo(2 * 1.03e-3, within(1e-12));
        assertThat(e.value("sluice_stream_event_gap_max_seconds_count", "route", "south", "model", "gpt-4o"))
            .as("the stream the client left is not one of complete gaps").isEqualTo(1);
        assertThat(e.value("sluice_stream_event_gap_max_seconds_sum", "route", "south", "model", "gpt-4o")).isCloseTo(3e-4, within(1e-12));
        // (end 2.03 ms - first event 1.03 ms) / 10 gaps
        assertThat(e.value("sluice_stream_event_gap_mean_seconds_sum", "route", "south", "model", "gpt-4o")).isCloseTo(1e-4, within(1e-12));
        assertThat(e.value("sluice_requests_total", "server", "north", "route", "south", "model", "gpt-4o", "status", "200",
            "outcome", "client_gone")).isEqualTo(1);
        assertThat(e.value("sluice_gateway_overhead_seconds_count", "server", "north", "route", "south"))
            .as("only completed exchanges").isEqualTo(1);
    }

    @Test
    void countsErrorsByKindAndTheRefusalsOfLimitsGuardsAndKeys() throws Exception
    {
        create("{\"jvm\":false}");
        record Case(ErrorKind kind, int status, boolean upstream, String server)
        {
        }
        for (Case k : List.of(new Case(ErrorKind.AUTHENTICATION, 401, false, "north"),
            new Case(ErrorKind.AUTHENTICATION, 401, false, "north"),
            new Case(ErrorKind.PERMISSION, 403, false, "north"),
            new Case(ErrorKind.RATE_LIMITED, 429, false, "north"),
            new Case(ErrorKind.RATE_LIMITED, 429, true, "north"),
            new Case(ErrorKind.GUARDRAIL_BLOCKED, 400, false, "north"),
            new Case(ErrorKind.UPSTREAM_ERROR, 500, true, "north"),
            new Case(ErrorKind.NOT_FOUND, 404, false, null)))
        {
            TestCompletion c = TestCompletion.served();
            c.errorKind = k.kind;
            c.status = k.status;
            c.server = k.server;
            if (!k.upstream)
            {
                c.noUpstream();
                c.model = null;
            }
            listener.completed(c);
        }

        Exposition e = scrape();
        assertThat(e.value("sluice_auth_failures_total", "server", "north", "kind", "authentication")).isEqualTo(2);
        assertThat(e.value("sluice_auth_failures_total", "server", "north", "kind", "permission")).isEqualTo(1);
        assertThat(e.value("sluice_limit_rejections_total", "server", "north", "model", "none"))
            .as("the provider's 429 is no limit of the gateway").isEqualTo(1);
        assertThat(e.value("sluice_guard_rejections_total", "server", "north", "model", "none")).isEqualTo(1);
        assertThat(e.value("sluice_errors_total", "server", "north", "route", "none", "kind", "rate_limited")).isEqualTo(1);
        assertThat(e.value("sluice_errors_total", "server", "north", "route", "south", "kind", "rate_limited")).isEqualTo(1);
        assertThat(e.value("sluice_errors_total", "server", "north", "route", "south", "kind", "upstream_error")).isEqualTo(1);
        assertThat(e.value("sluice_errors_total", "server", "none", "route", "none", "kind", "not_found")).isEqualTo(1);
        assertThat(e.sum("sluice_errors_total")).isEqualTo(8);
        assertThat(e.value("sluice_requests_total", "server", "north", "route", "south", "model", "other", "status", "500",
            "outcome", "completed")).as("gpt-4o is no model this binding was told of").isEqualTo(1);
        assertThat(e.value("sluice_requests_total", "server", "none", "route", "none", "model", "none", "status", "404",
            "outcome", "completed")).isEqualTo(1);
        assertThat(e.sum("sluice_request_duration_seconds_count")).isEqualTo(8);
        assertThat(e.sum("sluice_upstream_first_byte_seconds_count")).isEqualTo(2);
    }

    @Test
    void twoBindingsKeepTheirOwnCounts() throws Exception
    {
        // Each binding has its own registry: two gateways in one JVM, or two metrics bindings, do not add up.
        create("{\"jvm\":false}");
        TestBindingContext other = new TestBindingContext("next");
        new MetricsFactory().create(new BindingConfig("m2", "metrics", BindingKind.PROXY,
            Json.MAPPER.readTree("{\"jvm\":false,\"admin_path\":\"/metrics2\"}"), "next", List.of()), other);
        listener.completed(TestCompletion.served());
        listener.completed(TestCompletion.served());
        other.completionListeners().get(0).completed(TestCompletion.served());

        assertThat(scrape().sum("sluice_requests_total")).isEqualTo(2);
        AdminResponse second = get(other, "/metrics2", null, null);
        assertThat(Exposition.parse(new String(second.body(), StandardCharsets.UTF_8)).sum("sluice_requests_total")).isEqualTo(1);
    }

    @Test
    void readsInFlightAndThePoolsWhenScraped() throws Exception
    {
        create("{\"jvm\":false}");
        context.inFlight(3);
        context.upstreamStats(new RuntimeStats.UpstreamStats("south", "http://127.0.0.1:1", 5, 2, 3, 256, 4, 7, 8, 9),
            new RuntimeStats.UpstreamStats("south_h2", "http://127.0.0.1:2", 0, 0, 0, 16, 0));

        Exposition e = scrape();

        assertThat(e.value("sluice_in_flight_requests")).isEqualTo(3);
        assertThat(e.value("sluice_upstream_connections", "route", "south", "origin", "http://127.0.0.1:1", "state", "active")).isEqualTo(2);
        assertThat(e.value("sluice_upstream_connections", "route", "south", "origin", "http://127.0.0.1:1", "state", "idle")).isEqualTo(3);
        assertThat(e.value("sluice_upstream_connections_max", "route", "south", "origin", "http://127.0.0.1:1")).isEqualTo(256);
        assertThat(e.value("sluice_upstream_queued_requests", "route", "south", "origin", "http://127.0.0.1:1")).isEqualTo(4);
        assertThat(e.value("sluice_upstream_connections_max", "route", "south_h2", "origin", "http://127.0.0.1:2")).isEqualTo(16);
        assertThat(e.value("sluice_upstream_refusals_total", "route", "south", "origin", "http://127.0.0.1:1", "reason", "queue_full")).isEqualTo(7);
        assertThat(e.value("sluice_upstream_refusals_total", "route", "south", "origin", "http://127.0.0.1:1", "reason", "queue_wait")).isEqualTo(8);
        assertThat(e.value("sluice_upstream_refusals_total", "route", "south", "origin", "http://127.0.0.1:1", "reason", "queue_timeout")).isEqualTo(9);
        assertThat(e.value("sluice_upstream_refusals_total", "route", "south_h2", "origin", "http://127.0.0.1:2", "reason", "queue_timeout")).isZero();

        context.inFlight(0);
        assertThat(scrape().value("sluice_in_flight_requests")).isZero();
    }

    @Test
    void readsTheClientConnectionsWhenScrapedAndLeavesThemOutWhenTheRuntimeDoesNotSay() throws Exception
    {
        create("{\"jvm\":false}");
        Exposition none = scrape();
        assertThat(none.samples("sluice_client_connections")).isEmpty();
        assertThat(none.samples("sluice_client_connections_max")).isEmpty();
        assertThat(none.samples("sluice_client_connection_cap_reached_total")).isEmpty();
        assertThat(none.samples("sluice_client_connections_closed_idle_total")).isEmpty();

        context.clientConnections(new RuntimeStats.ClientConnectionStats(812, 10_000, 3, 129));
        Exposition e = scrape();
        assertThat(e.value("sluice_client_connections")).isEqualTo(812);
        assertThat(e.value("sluice_client_connections_max")).isEqualTo(10_000);
        assertThat(e.value("sluice_client_connection_cap_reached_total")).isEqualTo(3);
        assertThat(e.value("sluice_client_connections_closed_idle_total")).isEqualTo(129);

        // No cap: no maximum, the rest as it is.
        context.clientConnections(new RuntimeStats.ClientConnectionStats(0, 0, 0, 0));
        Exposition uncapped = scrape();
        assertThat(uncapped.value("sluice_client_connections")).isZero();
        assertThat(uncapped.samples("sluice_client_connections_max")).isEmpty();
        assertThat(uncapped.value("sluice_client_connection_cap_reached_total")).isZero();
    }

    @Test
    void answersOpenMetricsWhenAskedAndFiltersByName() throws Exception
    {
        create("{}");
        listener.completed(TestCompletion.served());

        AdminResponse om = get("/metrics", null, "application/openmetrics-text; version=1.0.0; charset=utf-8");
        String text = new String(om.body(), StandardCharsets.UTF_8);
        assertThat(om.contentType()).startsWith("application/openmetrics-text");
        assertThat(text).endsWith("# EOF\n").contains("# TYPE sluice_requests counter");
        assertThat(Exposition.parse(text).samples("jvm_threads_current")).as("JVM metrics on by default").hasSize(1);

        AdminResponse proto = get("/metrics", null, "application/vnd.google.protobuf; proto=io.prometheus.client.MetricFamily;"
            + " encoding=delimited");
        assertThat(proto.contentType()).as("no protobuf writer shipped: text").startsWith("text/plain; version=0.0.4");

        Exposition only = Exposition.parse(new String(get("/metrics", "name[]=sluice_requests_total&name%5B%5D=sluice_in_flight_requests",
            null).body(), StandardCharsets.UTF_8));
        assertThat(only.types.keySet()).containsExactlyInAnyOrder("sluice_requests_total", "sluice_in_flight_requests");
    }
}
