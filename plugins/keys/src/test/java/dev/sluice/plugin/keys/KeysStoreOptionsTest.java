package dev.sluice.plugin.keys;

import dev.sluice.api.binding.BindingConfig;
import dev.sluice.api.binding.BindingConfig.BindingKind;
import dev.sluice.api.config.ConfigException;
import dev.sluice.api.testing.TestBindingContext;
import dev.sluice.support.json.Json;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The {@code store} options as {@code sluice check} sees them: validated strictly, nothing connected or scheduled. */
class KeysStoreOptionsTest
{
    private final TestBindingContext context = new TestBindingContext("next").checkOnly(true);

    private void create(String options) throws Exception
    {
        new KeysFactory().create(new BindingConfig("keys", "keys", BindingKind.PROXY, Json.MAPPER.readTree(options), "next",
            List.of()), context);
    }

    @Test
    void aStoreAloneIsEnough_andUnderCheckItRegistersTheEndpointsAndConnectsNothing() throws Exception
    {
        create("{\"store\": {\"redis\": {\"url\": \"redis://127.0.0.1:1\"}}}");
        assertThat(context.adminRoutes()).containsOnlyKeys("GET /keys", "POST /keys/reload", "POST /keys", "DELETE /keys/*");
        assertThat(context.scheduledTasks()).isEmpty();
    }

    @Test
    void mistakesNameTheirPath()
    {
        assertThatThrownBy(() -> create("{\"store\": {\"refresh\": \"1s\"}}"))
            .isInstanceOf(ConfigException.class).hasMessageContaining("store.redis: must be set");
        assertThatThrownBy(() -> create("{\"store\": {\"redis\": {\"url\": \"http://x\"}}}"))
            .isInstanceOf(ConfigException.class).hasMessageContaining("url: must start with redis://");
        assertThatThrownBy(() -> create("{\"store\": {\"redis\": {\"url\": \"redis://x:1\"}, \"refresh\": \"10ms\"}}"))
            .isInstanceOf(ConfigException.class).hasMessageContaining("refresh: value: 10ms (expected: at least 100ms)");
        assertThatThrownBy(() -> create("{\"store\": {\"redis\": {\"url\": \"redis://x:1\"}, \"on_unavailable\": \"open\"}}"))
            .isInstanceOf(ConfigException.class).hasMessageContaining("on_unavailable: value: \"open\" (expected: one of:"
                + " last_known, fail_closed)");
        assertThatThrownBy(() -> create("{\"store\": {\"redis\": {\"url\": \"redis://x:1\"}, \"colour\": 1}}"))
            .isInstanceOf(ConfigException.class).hasMessageContaining("colour");
        assertThatThrownBy(() -> create("{}"))
            .isInstanceOf(ConfigException.class).hasMessageContaining("no keys and no file");
    }
}
