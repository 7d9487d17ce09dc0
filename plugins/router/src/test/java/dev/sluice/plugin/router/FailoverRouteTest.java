package dev.sluice.plugin.router;

import com.fasterxml.jackson.databind.JsonNode;
import dev.sluice.api.ErrorKind;
import dev.sluice.api.GatewayException;
import dev.sluice.api.binding.BindingConfig;
import dev.sluice.api.binding.BindingConfig.BindingKind;
import dev.sluice.api.binding.ProxyBinding;
import dev.sluice.api.binding.BindingConfig.RouteConfig;
import dev.sluice.api.binding.BindingConfig.RouteTarget;
import dev.sluice.api.config.ConfigException;
import dev.sluice.api.exchange.Exchange.Attempt;
import dev.sluice.api.exchange.Reply;
import dev.sluice.api.exchange.ResponseHeaders;
import dev.sluice.api.testing.TestBindingContext;
import dev.sluice.api.testing.TestExchange;
import dev.sluice.support.json.Json;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Routes with targets, driven through the factory with the SPI's test doubles: which target each attempt goes to, what
 * moves on and what does not, aliases per attempt, and the config errors. Timings (backoff, ejection cool-downs) are
 * covered with explicit clocks in {@link TargetStateTest} and end to end in the runtime's failover tests.
 */
class FailoverRouteTest
{
    private static final GatewayException DOWN = new GatewayException(ErrorKind.UPSTREAM_UNAVAILABLE,
        "upstream refused the connection");
    private static final GatewayException SERVER_500 = new GatewayException(ErrorKind.UPSTREAM_ERROR, 500, "boom", null,
        null, null);
    private static final GatewayException BAD_REQUEST = new GatewayException(ErrorKind.INVALID_REQUEST, 400,
        "messages: must not be empty", null, null, null);

    private final RouterFactory factory = new RouterFactory();

    @Test
    void aFailureMovesToTheNextGroupWithItsAliasAndEveryAttemptIsListed()
    {
        TestBindingContext context = new TestBindingContext("primary", "fallback");
        context.recorder("primary").failNext(DOWN, 1);
        ProxyBinding router = router(context, "{}", target("primary", "{}"),
            target("fallback", "{ priority: 1, with: { model: 'claude-sonnet-4-5' } }"));
        TestExchange exchange = new TestExchange("gpt-4o");

        assertThat(body(router.handle(exchange, null))).isEqualTo("fallback");

        assertThat(context.recorder("primary").targetModels()).containsExactly("gpt-4o");
        assertThat(context.recorder("fallback").targetModels()).containsExactly("claude-sonnet-4-5");
        List<Attempt> attempts = exchange.attempts();
        assertThat(attempts).extracting(Attempt::target).containsExactly("primary", "fallback");
        assertThat(attempts.get(0).result()).isEqualTo(Attempt.Result.FAILED);
        assertThat(attempts.get(0).errorKind()).isEqualTo(ErrorKind.UPSTREAM_UNAVAILABLE);
        assertThat(attempts.get(1).result()).as("the runtime ends the answering attempt").isEqualTo(Attempt.Result.PENDING);
    }

    @Test
    void anAliasOfOneAttemptDoesNotLeakIntoTheNext()
    {
        TestBindingContext context = new TestBindingContext("a", "b");
        context.recorder("a").failNext(SERVER_500, 1);
        ProxyBinding router = router(context, "{}", target("a", "{ with: { model: 'alias-a' } }"),
            target("b", "{ priority: 1 }"));

        assertThat(body(router.handle(new TestExchange("gpt-4o"), null))).isEqualTo("b");

        assertThat(context.recorder("b").targetModels()).as("b has no alias: the model the route matched")
            .containsExactly("gpt-4o");
    }

    @Test
    void aFailureNotNamedInOnIsTheClientsAnswerWithoutAnotherAttempt()
    {
        TestBindingContext context = new TestBindingContext("a", "b");
        context.recorder("a").failNext(BAD_REQUEST, 1);
        ProxyBinding router = router(context, "{}", target("a", "{}"), target("b", "{ priority: 1 }"));

        GatewayException error = failure(router.handle(new TestExchange("gpt-4o"), null));

        assertThat(error).isSameAs(BAD_REQUEST);
        assertThat(context.recorder("b").received()).isEmpty();
    }

    @Test
    void onlyTheNamedFailuresMoveOn()
    {
        TestBindingContext context = new TestBindingContext("a", "b");
        context.recorder("a").failNext(DOWN, 1);
        ProxyBinding router = router(context, "{ retry: { on: [ '5xx' ] } }", target("a", "{}"), target("b", "{ priority: 1 }"));

        assertThat(failure(router.handle(new TestExchange("gpt-4o"), null))).isSameAs(DOWN);
        assertThat(context.recorder("b").received()).isEmpty();
    }

    @Test
    void attemptsBoundTheTriesAcrossTargetsAndTheLastErrorIsTheClients()
    {
        TestBindingContext context = new TestBindingContext("a", "b", "c");
        context.recorder("a").failNext(DOWN, 1);
        context.recorder("b").failNext(SERVER_500, 1);
        ProxyBinding router = router(context, "{ retry: { attempts: 2 } }", target("a", "{}"),
            target("b", "{ priority: 1 }"), target("c", "{ priority: 2 }"));

        assertThat(failure(router.handle(new TestExchange("gpt-4o"), null))).isSameAs(SERVER_500);
        assertThat(context.recorder("c").received()).isEmpty();
    }

    @Test
    void aPromptTooLongMovesToAnotherTargetOnlyWhenContextWindowIsNamed()
    {
        GatewayException tooLong = new GatewayException(ErrorKind.INVALID_REQUEST, 400,
            "This model's maximum context length is 8192 tokens", "messages", "context_length_exceeded", null);
        TestBindingContext context = new TestBindingContext("small", "large");
        context.recorder("small").failNext(tooLong, 2);
        ProxyBinding plain = router(context, "{}", target("small", "{}"), target("large", "{ priority: 1 }"));
        assertThat(failure(plain.handle(new TestExchange("gpt-4o"), null))).isSameAs(tooLong);

        ProxyBinding widening = router(context, "{ retry: { on: [ 'context_window' ] } }", target("small", "{}"),
            target("large", "{ priority: 1 }"));
        assertThat(body(widening.handle(new TestExchange("gpt-4o"), null))).isEqualTo("large");
    }

    @Test
    void withinAGroupTheWeightsShareTheFirstAttempts()
    {
        TestBindingContext context = new TestBindingContext("heavy", "light");
        ProxyBinding router = router(context, "{}", target("heavy", "{ weight: 3 }"), target("light", "{ weight: 1 }"));
        for (int i = 0; i < 4000; i++)
            router.handle(new TestExchange("gpt-4o"), null);

        assertThat(context.recorder("heavy").received().size()).isBetween(2700, 3300);
    }

    @Test
    void leastInflightPrefersTheTargetWithFewerAttemptsInFlight()
    {
        TestBindingContext context = new TestBindingContext("busy", "idle").targetInFlight("busy", 50);
        ProxyBinding router = router(context, "{ balance: 'least_inflight' }", target("busy", "{}"), target("idle", "{}"));
        for (int i = 0; i < 200; i++)
            router.handle(new TestExchange("gpt-4o"), null);

        // Two distinct picks, the one with fewer in flight wins: "busy" only when four draws in a row fail to find a
        // second target (1 in 32 requests).
        assertThat(context.recorder("busy").received().size()).isLessThan(25);
    }

    @Test
    void stickyKeepsACallerOnOneTarget()
    {
        TestBindingContext context = new TestBindingContext("a", "b", "c");
        ProxyBinding router = router(context, "{ sticky: { header: 'x-session' } }", target("a", "{}"), target("b", "{}"),
            target("c", "{}"));
        List<String> answers = new ArrayList<>();
        for (int i = 0; i < 20; i++)
            answers.add(body(router.handle(new TestExchange("gpt-4o").header("x-session", "user-42"), null)));

        assertThat(answers).containsOnly(answers.get(0));
    }

    @Test
    void attemptHeadersSayHowManyAttemptsAndWhichTargetAnswered()
    {
        TestBindingContext context = new TestBindingContext("a", "b");
        context.recorder("a").failNext(DOWN, 1);
        ProxyBinding router = factory.create(config("{ attempt_headers: true }",
            new RouteConfig("bindings.router.routes[0]", List.of(), null, null,
                List.of(target("a", "{}"), target("b", "{ priority: 1 }")), json("{}"))), context);

        Reply reply = router.handle(new TestExchange("gpt-4o"), null).toCompletableFuture().join();

        ResponseHeaders headers = reply.headers();
        assertThat(headers.get("x-sluice-attempts")).isEqualTo("2");
        assertThat(headers.get("x-sluice-target")).isEqualTo("b");
    }

    @Test
    void aRouteWithTargetsRegistersItsAdminEndpoint()
    {
        TestBindingContext context = new TestBindingContext("a", "b").bindingName("router");
        router(context, "{}", target("a", "{}"), target("b", "{}"));

        assertThat(context.adminRoutes()).containsKey("GET /routes");
    }

    @Test
    void theAdminListenerShowsTheTargetsAsJsonAndAsPrometheusGauges() throws Exception
    {
        TestBindingContext context = new TestBindingContext("a", "b").bindingName("router");
        context.recorder("a").failNext(DOWN, 1);
        ProxyBinding router = router(context, "{ eject: { consecutive: 1 } }", target("a", "{}"),
            target("b", "{ priority: 1 }"));
        router.handle(new TestExchange("gpt-4o"), null).toCompletableFuture().join();

        String json = new String(context.adminRoutes().get("GET /routes").handle(null).toCompletableFuture().join().body(),
            StandardCharsets.UTF_8);
        String text = new String(context.adminRoutes().get("GET /routes/metrics").handle(null).toCompletableFuture().join()
            .body(), StandardCharsets.UTF_8);

        assertThat(Json.MAPPER.readTree(json).at("/routes/0/targets/0/state").asText()).isEqualTo("ejected");
        assertThat(text)
            .contains("sluice_route_target_state{router=\"router\",route=\"0\",target=\"a\",state=\"ejected\"} 1\n")
            .contains("sluice_route_target_state{router=\"router\",route=\"0\",target=\"a\",state=\"healthy\"} 0\n")
            .contains("sluice_route_target_state{router=\"router\",route=\"0\",target=\"b\",state=\"healthy\"} 1\n")
            .contains("sluice_route_target_ejections_total{router=\"router\",route=\"0\",target=\"a\"} 1\n")
            .contains("sluice_route_target_retries_refused_total{router=\"router\",route=\"0\",target=\"a\"} 0\n");
    }

    @Test
    void settingsAreCheckedStrictlyWithTheirPath()
    {
        TestBindingContext context = new TestBindingContext("a", "b");
        assertThatThrownBy(() -> router(context, "{ retry: { atempts: 2 } }", target("a", "{}")))
            .isInstanceOf(ConfigException.class)
            .hasMessageStartingWith("bindings.router.routes[0].retry.atempts: unknown key");
        assertThatThrownBy(() -> router(context, "{ balance: 'random' }", target("a", "{}")))
            .isInstanceOf(ConfigException.class)
            .hasMessageContaining("balance").hasMessageContaining("weighted, least_inflight or latency");
        assertThatThrownBy(() -> router(context, "{ retry: { on: [ 404 ] } }", target("a", "{}")))
            .isInstanceOf(ConfigException.class)
            .hasMessageContaining("connect, timeout, 429, 5xx or context_window");
        assertThatThrownBy(() -> router(context, "{}", target("a", "{ weight: 0 }")))
            .isInstanceOf(ConfigException.class)
            .hasMessageStartingWith("bindings.router.routes[0].targets[0].weight: value: 0 (expected: 1..1000)");
        assertThatThrownBy(() -> router(context, "{}", target("a", "{ wieght: 2 }")))
            .isInstanceOf(ConfigException.class)
            .hasMessageStartingWith("bindings.router.routes[0].targets[0].wieght: unknown key");
        assertThatThrownBy(() -> router(context, "{ eject: { base: '1m', max: '10s' } }", target("a", "{}")))
            .isInstanceOf(ConfigException.class)
            .hasMessageContaining("max");
    }

    @Test
    void aRouteWithOneExitTakesNoFailoverSettings()
    {
        TestBindingContext context = new TestBindingContext("a");
        RouteConfig route = new RouteConfig("bindings.router.routes[0]", List.of(), "a", null, List.of(),
            json("{ retry: { attempts: 2 } }"));

        assertThatThrownBy(() -> factory.create(config("{}", route), context))
            .isInstanceOf(ConfigException.class)
            .hasMessageStartingWith("bindings.router.routes[0].retry: unknown key");
    }

    private ProxyBinding router(TestBindingContext context, String settings, RouteTarget... targets)
    {
        RouteConfig route = new RouteConfig("bindings.router.routes[0]", List.of(), null, null, List.of(targets),
            json(settings));
        return factory.create(config("{}", route), context);
    }

    private static RouteTarget target(String exit, String settings)
    {
        return new RouteTarget("bindings.router.routes[0].targets[" + index(exit) + "]", exit, json(settings));
    }

    /** The index the config loader would give: a, b, c… by their first letter, enough for these tests' messages. */
    private static int index(String exit)
    {
        return switch (exit)
        {
            case "b", "fallback", "light", "idle", "large" -> 1;
            case "c" -> 2;
            default -> 0;
        };
    }

    private static BindingConfig config(String options, RouteConfig route)
    {
        return new BindingConfig("router", "router", BindingKind.PROXY, json(options), null, List.of(route));
    }

    /** Reads a JSON object written with unquoted names and single-quoted strings, for readable settings. */
    private static JsonNode json(String relaxed)
    {
        try
        {
            return Json.MAPPER.reader().with(com.fasterxml.jackson.core.json.JsonReadFeature.ALLOW_UNQUOTED_FIELD_NAMES)
                .with(com.fasterxml.jackson.core.json.JsonReadFeature.ALLOW_SINGLE_QUOTES).readTree(relaxed);
        }
        catch (java.io.IOException e)
        {
            throw new IllegalArgumentException(relaxed, e);
        }
    }

    private static String body(java.util.concurrent.CompletionStage<Reply> stage)
    {
        Reply reply = stage.toCompletableFuture().join();
        return new String(((Reply.Bytes)reply).body(), StandardCharsets.UTF_8);
    }

    private static GatewayException failure(java.util.concurrent.CompletionStage<Reply> stage)
    {
        CompletableFuture<Reply> future = stage.toCompletableFuture();
        assertThat(future).isCompletedExceptionally();
        return (GatewayException)future.handle((r, f) -> f instanceof java.util.concurrent.CompletionException c
            ? c.getCause() : f).join();
    }
}
