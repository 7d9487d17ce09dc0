package dev.sluice.api.binding;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import dev.sluice.api.config.ConfigException;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import dev.sluice.api.binding.BindingConfig.BindingKind;
import dev.sluice.api.binding.BindingConfig.RouteConfig;

class BindingConfigTest
{
    private static BindingConfig config(String exit, List<RouteConfig> routes)
    {
        return new BindingConfig("b", "log", BindingKind.PROXY, JsonNodeFactory.instance.objectNode(), exit, routes);
    }

    @Test
    void requireSingleExitReturnsTheExit()
    {
        assertThat(config("next", List.of()).requireSingleExit("x passes every request on", "where requests go"))
            .isEqualTo("next");
    }

    @Test
    void requireSingleExitRefusesAMissingExitNamingItsPath()
    {
        assertThatThrownBy(() -> config(null, List.of()).requireSingleExit("x passes every request on", "where requests go"))
            .isInstanceOf(ConfigException.class)
            .hasMessage("bindings.b.exit: must be set (expected: where requests go)");
    }

    @Test
    void requireSingleExitRefusesRoutesSayingWhy()
    {
        RouteConfig route = new RouteConfig("bindings.b.routes[0]", List.of(), "elsewhere", null);
        assertThatThrownBy(() -> config("next", List.of(route)).requireSingleExit("x passes every request on", "where"))
            .isInstanceOf(ConfigException.class)
            .hasMessage("bindings.b.routes: value: 1 routes (expected: none; x passes every request on)");
    }
}
