package dev.sluice.examples.costbalancer;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.sluice.api.binding.BindingConfig;
import dev.sluice.api.binding.BindingConfig.BindingKind;
import dev.sluice.api.binding.BindingConfig.RouteConfig;
import dev.sluice.api.binding.BindingConfig.RouteTarget;
import dev.sluice.api.config.ConfigException;
import dev.sluice.api.testing.TestBindingContext;
import dev.sluice.support.json.Json;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The factory refuses every mistake in a {@code cost-balancer} binding's config with the path of the faulty key, before
 * it resolves any target. Routing and fallback run in a real gateway: {@code CostBalancerExampleTest} in the Sluice
 * repository's gateway-runtime.
 */
class CostBalancerFactoryTest
{
    private static final String ROUTE = "bindings.cheap_first.routes[0]";

    private final CostBalancerFactory factory = new CostBalancerFactory();
    private final TestBindingContext context = new TestBindingContext("south_mini", "south_big");

    @Test
    void aMisspeltTargetKeyIsNamedWithItsPath()
    {
        assertThatThrownBy(() -> create("{}", route("{}", "{\"exit\":\"south_mini\",\"coast\":0.15}")))
            .isInstanceOf(ConfigException.class)
            .hasMessage(ROUTE + ".targets[0].coast: unknown key (expected one of: cost)");
    }

    @Test
    void aTargetWithoutACostIsRefused()
    {
        assertThatThrownBy(() -> create("{}", route("{}", "{\"exit\":\"south_mini\",\"cost\":0.15}", "{\"exit\":\"south_big\"}")))
            .isInstanceOf(ConfigException.class)
            .hasMessage(ROUTE + ".targets[1].cost: must be set (expected: a number such as 0.15)");
    }

    @Test
    void aNegativeOrNonNumericCostIsRefused()
    {
        assertThatThrownBy(() -> create("{}", route("{}", "{\"exit\":\"south_mini\",\"cost\":-1}")))
            .isInstanceOf(ConfigException.class)
            .hasMessage(ROUTE + ".targets[0].cost: value: -1.0 (expected: a number of at least 0)");
        assertThatThrownBy(() -> create("{}", route("{}", "{\"exit\":\"south_mini\",\"cost\":\"cheap\"}")))
            .isInstanceOf(ConfigException.class)
            .hasMessageStartingWith(ROUTE + ".targets[0].cost: ");
    }

    @Test
    void aMisspeltOptionIsNamedWithItsPath()
    {
        assertThatThrownBy(() -> create("{\"max_in_flight\":8}", route("{}", "{\"exit\":\"south_mini\",\"cost\":1}")))
            .isInstanceOf(ConfigException.class)
            .hasMessage("bindings.cheap_first.options.max_in_flight: unknown key (expected one of: max_inflight)");
    }

    @Test
    void maxInflightBelowOneIsRefused()
    {
        assertThatThrownBy(() -> create("{\"max_inflight\":0}", route("{}", "{\"exit\":\"south_mini\",\"cost\":1}")))
            .isInstanceOf(ConfigException.class)
            .hasMessage("bindings.cheap_first.options.max_inflight: value: 0 (expected: at least 1)");
    }

    @Test
    void aRouteKeyOtherThanWhenAndTargetsIsRefused()
    {
        assertThatThrownBy(() -> create("{}", route("{\"retry\":{\"attempts\":3}}", "{\"exit\":\"south_mini\",\"cost\":1}")))
            .isInstanceOf(ConfigException.class)
            .hasMessage(ROUTE + ".retry: unknown key (expected one of: when, targets)");
    }

    @Test
    void aRouteWithOneExitInsteadOfTargetsIsRefused()
    {
        RouteConfig single = new RouteConfig(ROUTE, List.of(), "south_mini", null);
        assertThatThrownBy(() -> create("{}", single))
            .isInstanceOf(ConfigException.class)
            .hasMessage(ROUTE + ".exit: value: \"south_mini\" (expected: targets, a list of { exit: BINDING, cost: NUMBER })");
    }

    @Test
    void theSameExitTwiceInARouteIsRefused()
    {
        assertThatThrownBy(() -> create("{}", route("{}", "{\"exit\":\"south_mini\",\"cost\":1}",
            "{\"exit\":\"south_mini\",\"cost\":2}")))
            .isInstanceOf(ConfigException.class)
            .hasMessage(ROUTE + ".targets[1].exit: value: \"south_mini\" (expected: each binding once per route)");
    }

    @Test
    void aConditionWithoutAModelIsRefused()
    {
        RouteConfig route = route("{}", "{\"exit\":\"south_mini\",\"cost\":1}");
        RouteConfig typo = new RouteConfig(route.path(), List.of(json("{\"modle\":\"gpt-*\"}")), null, null,
            route.targets(), route.settings());
        assertThatThrownBy(() -> create("{}", typo))
            .isInstanceOf(ConfigException.class)
            .hasMessage(ROUTE + ".when[0].modle: unknown key (expected one of: model)");
    }

    @Test
    void aBindingExitIsRefused()
    {
        BindingConfig config = new BindingConfig("cheap_first", CostBalancerFactory.TYPE, BindingKind.PROXY, json("{}"),
            "south_big", List.of(route("{}", "{\"exit\":\"south_mini\",\"cost\":1}")));
        assertThatThrownBy(() -> factory.create(config, context))
            .isInstanceOf(ConfigException.class)
            .hasMessageStartingWith("bindings.cheap_first.exit: value: \"south_big\" (expected: none;");
    }

    private void create(String options, RouteConfig route)
    {
        factory.create(new BindingConfig("cheap_first", CostBalancerFactory.TYPE, BindingKind.PROXY, json(options), null,
            List.of(route)), context);
    }

    /** Route 0 matching every model, as the runtime hands it over: the targets' exits apart, the other keys raw. */
    private static RouteConfig route(String settings, String... targets)
    {
        List<RouteTarget> list = new ArrayList<>();
        for (int i = 0; i < targets.length; i++)
        {
            ObjectNode target = (ObjectNode)json(targets[i]);
            String exit = target.remove("exit").asText();
            list.add(new RouteTarget(ROUTE + ".targets[" + i + "]", exit, target));
        }
        return new RouteConfig(ROUTE, List.of(json("{\"model\":\"*\"}")), null, null, list, json(settings));
    }

    private static JsonNode json(String text)
    {
        try
        {
            return Json.MAPPER.readTree(text);
        }
        catch (Exception e)
        {
            throw new IllegalArgumentException(text, e);
        }
    }
}
