package dev.sluice.plugin.log;

import com.fasterxml.jackson.databind.JsonNode;
import dev.sluice.api.binding.BindingConfig;
import dev.sluice.api.binding.BindingConfig.BindingKind;
import dev.sluice.api.config.ConfigException;
import dev.sluice.api.testing.TestBindingContext;
import dev.sluice.support.json.Json;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The timing headers' options and number format; their values are checked end to end in the runtime's tests. */
class TimingHeadersTest
{
    private static BindingConfig config(String optionsJson) throws Exception
    {
        JsonNode options = Json.MAPPER.readTree(optionsJson);
        return new BindingConfig("timing", "timing-headers", BindingKind.PROXY, options, "next", List.of());
    }

    @Test
    void millisecondsHaveThreeDecimals()
    {
        assertThat(TimingHeadersBinding.millis(0)).isEqualTo("0.000");
        assertThat(TimingHeadersBinding.millis(999)).isEqualTo("0.000");
        assertThat(TimingHeadersBinding.millis(1_000)).isEqualTo("0.001");
        assertThat(TimingHeadersBinding.millis(12_034_567)).isEqualTo("12.034");
        assertThat(TimingHeadersBinding.millis(1_050_000)).isEqualTo("1.050");
        assertThat(TimingHeadersBinding.millis(3_600_000_000_000L)).isEqualTo("3600000.000");
    }

    @Test
    void theFormatIsCheckedWithItsPath() throws Exception
    {
        TestBindingContext context = new TestBindingContext("next").checkOnly(true).bindingName("log").refuseOneShotSchedules();
        TimingHeadersFactory factory = new TimingHeadersFactory();
        assertThat(factory.create(config("{}"), context)).isNotNull();
        assertThat(factory.create(config("{\"format\": \"both\"}"), context)).isNotNull();
        assertThatThrownBy(() -> factory.create(config("{\"format\": \"xml\"}"), context))
            .isInstanceOf(ConfigException.class)
            .hasMessage("bindings.timing.options.format: value: \"xml\" (expected: server-timing, x-headers or both)");
        assertThatThrownBy(() -> factory.create(config("{\"fmt\": \"both\"}"), context))
            .isInstanceOf(ConfigException.class)
            .hasMessageStartingWith("bindings.timing.options.fmt: unknown key");
        assertThat(new TimingHeadersOptions(null).serverTiming()).isTrue();
        assertThat(new TimingHeadersOptions(null).xHeaders()).isFalse();
        assertThat(new TimingHeadersOptions("x-headers").serverTiming()).isFalse();
        assertThat(new TimingHeadersOptions("both").xHeaders()).isTrue();
    }
}
