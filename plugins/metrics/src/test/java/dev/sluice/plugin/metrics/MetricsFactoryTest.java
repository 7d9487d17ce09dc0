package dev.sluice.plugin.metrics;

import com.fasterxml.jackson.databind.JsonNode;
import dev.sluice.api.binding.BindingConfig;
import dev.sluice.api.binding.BindingConfig.BindingKind;
import dev.sluice.api.binding.ProxyBinding;
import dev.sluice.api.binding.BindingConfig.RouteConfig;
import dev.sluice.api.config.ConfigException;
import dev.sluice.api.exchange.Completion.CompletionListener;
import dev.sluice.api.exchange.Reply;
import dev.sluice.api.testing.TestBindingContext;
import dev.sluice.api.testing.TestExchange;
import dev.sluice.support.json.Json;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Config validation of {@code metrics} bindings (every mistake names its path) and what a binding registers. */
class MetricsFactoryTest
{
    private static JsonNode json(String text)
    {
        try
        {
            return Json.MAPPER.readTree(text);
        }
        catch (IOException e)
        {
            throw new UncheckedIOException(e);
        }
    }

    private static ProxyBinding create(String optionsJson, TestBindingContext context)
    {
        return new MetricsFactory().create(new BindingConfig("m", "metrics", BindingKind.PROXY, json(optionsJson), "next",
            List.of()), context);
    }

    private static void assertFails(String optionsJson, String message)
    {
        assertThatThrownBy(() -> create(optionsJson, new TestBindingContext("next").checkOnly(true)))
            .isInstanceOf(ConfigException.class).hasMessage(message);
    }

    @Test
    void rejectsEachBadOptionNamingItsPath()
    {
        assertFails("{\"modles\":[\"gpt-*\"]}",
            "bindings.m.options.modles: unknown key (expected one of: admin_path, jvm, max_models, models)");
        assertFails("{\"max_models\":0}", "bindings.m.options.max_models: value: 0 (expected: 1 to 10000)");
        assertFails("{\"max_models\":10001}", "bindings.m.options.max_models: value: 10001 (expected: 1 to 10000)");
        assertFails("{\"max_models\":\"many\"}", "bindings.m.options.max_models: wrong type (expected: an integer)");
        assertFails("{\"models\":[\"gpt-4o\",\" \"]}",
            "bindings.m.options.models[1]: must not be blank (expected: a model name or a glob such as gpt-4o*)");
        assertFails("{\"models\":\"gpt-*\"}", "bindings.m.options.models: wrong type (expected: a list)");
        assertFails("{\"admin_path\":\"metrics\"}",
            "bindings.m.options.admin_path: value: \"metrics\" (expected: a path starting with /, no query)");
        assertFails("{\"admin_path\":\"/metrics?x=1\"}",
            "bindings.m.options.admin_path: value: \"/metrics?x=1\" (expected: a path starting with /, no query)");
        assertFails("{\"jvm\":\"yes\"}", "bindings.m.options.jvm: wrong type (expected: true or false)");
    }

    @Test
    void needsAnExitAndNoRoutes()
    {
        TestBindingContext context = new TestBindingContext("next").checkOnly(true);
        assertThatThrownBy(() -> new MetricsFactory().create(new BindingConfig("m", "metrics", BindingKind.PROXY, json("{}"),
            null, List.of()), context)).isInstanceOf(ConfigException.class)
            .hasMessage("bindings.m.exit: must be set (expected: the binding requests go to)");
        RouteConfig route = new RouteConfig("bindings.m.routes[0]", List.of(), "next", null);
        assertThatThrownBy(() -> new MetricsFactory().create(new BindingConfig("m", "metrics", BindingKind.PROXY, json("{}"),
            "next", List.of(route)), context)).isInstanceOf(ConfigException.class)
            .hasMessage("bindings.m.routes: value: 1 routes (expected: none; metrics passes every request to its exit)");
    }

    @Test
    void underCheckRegistersTheRouteButNoListenerAndReadsNothing()
    {
        TestBindingContext context = new TestBindingContext("next").checkOnly(true);

        create("{\"admin_path\":\"/m\",\"models\":[\"gpt-*\"]}", context);

        assertThat(context.adminRoutes()).containsOnlyKeys("GET /m");
        assertThat(context.completionListeners()).isEmpty();
        assertThat(context.advertisedModelsReads()).isZero();
    }

    @Test
    void servesOnItsPathCountsEveryExchangeAndPassesRequestsOnUntouched() throws Exception
    {
        TestBindingContext context = new TestBindingContext("next");

        ProxyBinding binding = create("{}", context);
        TestExchange exchange = new TestExchange("gpt-4o");
        Reply reply = binding.handle(exchange, context.exit("next")).toCompletableFuture().get();

        assertThat(context.adminRoutes()).containsOnlyKeys("GET /metrics");
        assertThat(context.completionListeners()).containsExactly((CompletionListener)binding);
        assertThat(((Reply.Bytes)reply).body()).asString().isEqualTo("next");
        assertThat(context.recorder("next").received()).containsExactly(exchange);
    }
}
