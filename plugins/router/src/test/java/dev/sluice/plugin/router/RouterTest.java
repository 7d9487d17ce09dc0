package dev.sluice.plugin.router;

import com.fasterxml.jackson.databind.JsonNode;
import dev.sluice.api.ErrorKind;
import dev.sluice.api.GatewayException;
import dev.sluice.api.binding.BindingConfig;
import dev.sluice.api.binding.BindingConfig.BindingKind;
import dev.sluice.api.binding.ProxyBinding;
import dev.sluice.api.binding.BindingConfig.RouteConfig;
import dev.sluice.api.config.ConfigException;
import dev.sluice.api.exchange.Next;
import dev.sluice.api.exchange.Reply;
import dev.sluice.api.testing.TestBindingContext;
import dev.sluice.api.testing.TestExchange;
import dev.sluice.support.json.Json;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class RouterTest
{
    private final RouterFactory factory = new RouterFactory();

    @Test
    void firstMatchingRouteWins()
    {
        TestBindingContext context = new TestBindingContext("a", "b", "c");
        ProxyBinding router = factory.create(config(null,
            route(0, "a", null, "gpt-4o"),
            route(1, "b", null, "gpt-*"),
            route(2, "c", null, "*")), context);

        assertThat(body(router.handle(new TestExchange("gpt-4o"), failingNext()))).isEqualTo("a");
        assertThat(body(router.handle(new TestExchange("gpt-4o-mini"), failingNext()))).isEqualTo("b");
        assertThat(body(router.handle(new TestExchange("claude-sonnet-4"), failingNext()))).isEqualTo("c");
        assertThat(context.recorder("a").received()).hasSize(1);
        assertThat(context.recorder("b").received()).hasSize(1);
        assertThat(context.recorder("c").received()).hasSize(1);
    }

    @Test
    void anyConditionOfARouteSelectsIt()
    {
        TestBindingContext context = new TestBindingContext("openai", "anthropic");
        ProxyBinding router = factory.create(config(null,
            route(0, "openai", null, "gpt-*", "o?-*"),
            route(1, "anthropic", null, "claude-*")), context);

        assertThat(body(router.handle(new TestExchange("o3-mini"), failingNext()))).isEqualTo("openai");
        assertThat(body(router.handle(new TestExchange("gpt-5"), failingNext()))).isEqualTo("openai");
        assertThat(body(router.handle(new TestExchange("claude-opus-4"), failingNext()))).isEqualTo("anthropic");
    }

    @Test
    void emptyWhenMatchesEveryModel()
    {
        TestBindingContext context = new TestBindingContext("specific", "all");
        ProxyBinding router = factory.create(config(null,
            route(0, "specific", null, "gpt-4o"),
            route(1, "all", null)), context);

        assertThat(body(router.handle(new TestExchange("whatever-model"), failingNext()))).isEqualTo("all");
    }

    @Test
    void globsAreCaseSensitive()
    {
        TestBindingContext context = new TestBindingContext("openai");
        ProxyBinding router = factory.create(config(null, route(0, "openai", null, "gpt-*")), context);

        assertThatThrownBy(() -> router.handle(new TestExchange("GPT-4o"), failingNext()).toCompletableFuture().get())
            .hasCauseInstanceOf(GatewayException.class);
        assertThat(context.calls()).isZero();
    }

    @Test
    void aliasSetsTargetModelButNotTheClientsModel()
    {
        TestBindingContext context = new TestBindingContext("openai");
        ProxyBinding router = factory.create(config(null, route(0, "openai", "gpt-4o-mini", "fast")), context);
        TestExchange exchange = new TestExchange("fast");

        assertThat(body(router.handle(exchange, failingNext()))).isEqualTo("openai");
        assertThat(exchange.targetModel()).isEqualTo("gpt-4o-mini");
        assertThat(exchange.model()).isEqualTo("fast");
        assertThat(context.recorder("openai").targetModels()).containsExactly("gpt-4o-mini");
        assertThat(exchange.decodes()).isZero();
        assertThat(exchange.modified()).isFalse();
    }

    @Test
    void routeWithoutAliasKeepsTheTargetModel()
    {
        TestBindingContext context = new TestBindingContext("openai");
        ProxyBinding router = factory.create(config(null, route(0, "openai", null, "gpt-*")), context);
        TestExchange exchange = new TestExchange("gpt-4o");

        router.handle(exchange, failingNext());

        assertThat(exchange.targetModel()).isEqualTo("gpt-4o");
        assertThat(exchange.decodes()).isZero();
        assertThat(exchange.modified()).isFalse();
    }

    @Test
    void matchesOnTheTargetModelSoRoutersChain()
    {
        TestBindingContext context = new TestBindingContext("openai");
        ProxyBinding router = factory.create(config(null, route(0, "openai", null, "gpt-*")), context);
        TestExchange exchange = new TestExchange("fast");
        exchange.targetModel("gpt-4o-mini");

        assertThat(body(router.handle(exchange, failingNext()))).isEqualTo("openai");
    }

    @Test
    void unmatchedModelTakesTheFallbackExit()
    {
        TestBindingContext context = new TestBindingContext("openai", "fallback");
        ProxyBinding router = factory.create(config("fallback", route(0, "openai", null, "gpt-*")), context);
        TestBindingContext.RecordingNext fallback = context.recorder("fallback");
        TestExchange exchange = new TestExchange("mistral-large");

        assertThat(body(router.handle(exchange, fallback))).isEqualTo("fallback");
        assertThat(context.recorder("openai").received()).isEmpty();
        assertThat(fallback.received()).containsExactly(exchange);
        assertThat(exchange.decodes()).isZero();
        assertThat(exchange.modified()).isFalse();
    }

    @Test
    void rejectsUnknownModelWithoutCallingAnyExit() throws Exception
    {
        TestBindingContext context = new TestBindingContext("openai");
        ProxyBinding router = factory.create(config(null, route(0, "openai", null, "gpt-*")), context);
        List<String> nextCalls = new ArrayList<>();
        TestExchange exchange = new TestExchange("llama-3");

        CompletionStage<Reply> stage = router.handle(exchange, forwarded ->
        {
            nextCalls.add(forwarded.model());
            throw new AssertionError("next must not be called without a fallback exit");
        });

        assertThat(stage.toCompletableFuture()).isCompletedExceptionally();
        GatewayException error = failure(stage);
        assertThat(error.kind()).isEqualTo(ErrorKind.NOT_FOUND);
        assertThat(error.status()).isEqualTo(404);
        assertThat(error.getMessage()).isEqualTo("model: \"llama-3\" is not served by this gateway");
        assertThat(error.param()).isEqualTo("model");
        assertThat(error.code()).isEqualTo("model_not_found");
        assertThat(nextCalls).isEmpty();
        assertThat(context.calls()).isZero();
        assertThat(exchange.decodes()).isZero();
    }

    @Test
    void notFoundMessageQuotesAndCapsTheModel()
    {
        ProxyBinding router = factory.create(config(null, route(0, "openai", null, "gpt-*")), new TestBindingContext("openai"));

        GatewayException error = failure(router.handle(new TestExchange("a\"b" + "x".repeat(1000)), failingNext()));

        assertThat(error.getMessage()).startsWith("model: \"a\\\"bxxx").endsWith("...\" is not served by this gateway");
        assertThat(error.getMessage().length()).isLessThan(300);
    }

    @Test
    void advertisesLiteralModelsOnly()
    {
        ProxyBinding router = factory.create(config(null,
            route(0, "a", null, "gpt-4o", "gpt-*"),
            route(1, "a", "gpt-4o-mini", "fast"),
            route(2, "b", null, "claude-?", "gpt-4o", "claude-sonnet-4")), new TestBindingContext("a", "b"));

        assertThat(router.advertisedModels()).containsExactly("gpt-4o", "fast", "claude-sonnet-4");
    }

    @Test
    void rejectsUnknownKeyInWhenWithItsPath()
    {
        BindingConfig config = config(null,
            route(0, "a", null, "gpt-*"),
            new RouteConfig("bindings.router.routes[1]", List.of(json("{\"modle\":\"x\"}")), "a", null));

        assertThatThrownBy(() -> factory.create(config, new TestBindingContext("a")))
            .isInstanceOf(ConfigException.class)
            .hasMessage("bindings.router.routes[1].when[0].modle: unknown key (expected one of: model)");
    }

    @Test
    void rejectsBlankGlobWithItsPath()
    {
        BindingConfig config = config(null,
            new RouteConfig("bindings.router.routes[0]", List.of(json("{\"model\":\"gpt-*\"}"), json("{\"model\":\" \"}")),
                "a", null));

        assertThatThrownBy(() -> factory.create(config, new TestBindingContext("a")))
            .isInstanceOf(ConfigException.class)
            .satisfies(e -> assertThat(((ConfigException)e).path()).isEqualTo("bindings.router.routes[0].when[1].model"))
            .hasMessageContaining("value: \" \" (expected: a model name or a glob such as gpt-*)");
    }

    @Test
    void rejectsWhenEntryWithoutModel()
    {
        BindingConfig config = config(null, new RouteConfig("bindings.router.routes[0]", List.of(json("{}")), "a", null));

        assertThatThrownBy(() -> factory.create(config, new TestBindingContext("a")))
            .isInstanceOf(ConfigException.class)
            .hasMessageStartingWith("bindings.router.routes[0].when[0].model: must be set");
    }

    @Test
    void rejectsWhenEntryThatIsNotAnObject()
    {
        BindingConfig config = config(null, new RouteConfig("bindings.router.routes[0]", List.of(json("\"gpt-*\"")), "a", null));

        assertThatThrownBy(() -> factory.create(config, new TestBindingContext("a")))
            .isInstanceOf(ConfigException.class)
            .satisfies(e -> assertThat(((ConfigException)e).path()).isEqualTo("bindings.router.routes[0].when[0]"));
    }

    @Test
    void rejectsUnknownKeyInWithWithItsPath()
    {
        BindingConfig config = config(null,
            new RouteConfig("bindings.router.routes[0]", List.of(), "a", json("{\"model\":\"x\",\"temperature\":1}")));

        assertThatThrownBy(() -> factory.create(config, new TestBindingContext("a")))
            .isInstanceOf(ConfigException.class)
            .hasMessage("bindings.router.routes[0].with.temperature: unknown key (expected one of: model)");
    }

    @Test
    void rejectsBlankAliasWithItsPath()
    {
        BindingConfig config = config(null,
            new RouteConfig("bindings.router.routes[0]", List.of(), "a", json("{\"model\":\"\"}")));

        assertThatThrownBy(() -> factory.create(config, new TestBindingContext("a")))
            .isInstanceOf(ConfigException.class)
            .satisfies(e -> assertThat(((ConfigException)e).path()).isEqualTo("bindings.router.routes[0].with.model"));
    }

    @Test
    void rejectsAnUnknownOptionWithItsPath()
    {
        BindingConfig config = new BindingConfig("router", "router", BindingKind.PROXY, json("{\"routes\":[]}"), null,
            List.of(route(0, "a", null, "gpt-*")));

        assertThatThrownBy(() -> factory.create(config, new TestBindingContext("a")))
            .isInstanceOf(ConfigException.class)
            .hasMessage("bindings.router.options.routes: "
                + "unknown key (expected one of: admin_path, attempt_headers, retry_budget)");
    }

    private static BindingConfig config(String exit, RouteConfig... routes)
    {
        return new BindingConfig("router", "router", BindingKind.PROXY, Json.MAPPER.createObjectNode(), exit, List.of(routes));
    }

    private static RouteConfig route(int index, String exit, String alias, String... globs)
    {
        List<JsonNode> when = new ArrayList<>();
        for (String glob : globs)
            when.add(Json.MAPPER.createObjectNode().put("model", glob));
        JsonNode with = alias == null ? null : Json.MAPPER.createObjectNode().put("model", alias);
        return new RouteConfig("bindings.router.routes[" + index + "]", when, exit, with);
    }

    private static JsonNode json(String text)
    {
        try
        {
            return Json.MAPPER.readTree(text);
        }
        catch (Exception e)
        {
            throw new AssertionError(e);
        }
    }

    private static Next failingNext()
    {
        return exchange ->
        {
            throw new AssertionError("the fallback must not be called");
        };
    }

    private static String body(CompletionStage<Reply> stage)
    {
        try
        {
            Reply reply = stage.toCompletableFuture().get();
            return new String(((Reply.Bytes)reply).body(), StandardCharsets.UTF_8);
        }
        catch (InterruptedException | ExecutionException e)
        {
            throw new AssertionError(e);
        }
    }

    private static GatewayException failure(CompletionStage<Reply> stage)
    {
        try
        {
            stage.toCompletableFuture().get();
            throw new AssertionError("expected a failure");
        }
        catch (ExecutionException e)
        {
            return (GatewayException)e.getCause();
        }
        catch (InterruptedException e)
        {
            throw new AssertionError(e);
        }
    }
}
