package dev.sluice.api.config;

import dev.sluice.api.json.Json;
import dev.sluice.api.upstream.HttpVersion;
import dev.sluice.api.upstream.UpstreamOptions;
import org.junit.jupiter.api.Test;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class HttpOptionsConfigTest
{
    private static UpstreamOptions bind(String http) throws Exception
    {
        HttpOptionsConfig config = http == null ? null
            : Options.bind(Json.MAPPER.readTree(http), HttpOptionsConfig.class, "bindings.south.options.http");
        return HttpOptionsConfig.toUpstreamOptions(config, "http://127.0.0.1:9/v1", "bindings.south.options.url");
    }

    @Test
    void fillsBoundedQueueDefaults() throws Exception
    {
        UpstreamOptions options = bind(null);
        assertThat(options.version()).isEqualTo(HttpVersion.HTTP_1_1);
        assertThat(options.maxConnections()).isEqualTo(HttpOptionsConfig.DEFAULT_MAX_CONNECTIONS).isEqualTo(4096);
        assertThat(options.maxQueued()).isEqualTo(UpstreamOptions.DEFAULT_MAX_QUEUED).isEqualTo(16384);
        assertThat(options.queueTimeout()).isEqualTo(UpstreamOptions.DEFAULT_QUEUE_TIMEOUT).isEqualTo(Duration.ofSeconds(2));
    }

    @Test
    void bindsQueueSettings() throws Exception
    {
        UpstreamOptions options = bind("{\"max_connections\":8,\"max_queued\":16,\"queue_timeout\":\"250ms\"}");
        assertThat(options.maxConnections()).isEqualTo(8);
        assertThat(options.maxQueued()).isEqualTo(16);
        assertThat(options.queueTimeout()).isEqualTo(Duration.ofMillis(250));
    }

    @Test
    void refusesAnUnboundedOrEmptyQueueByPath()
    {
        assertThatThrownBy(() -> bind("{\"max_queued\":0}")).isInstanceOf(ConfigException.class)
            .hasMessage("bindings.south.options.http.max_queued: value: 0 (expected: >= 1)");
        assertThatThrownBy(() -> bind("{\"queue_timeout\":\"0s\"}")).isInstanceOf(ConfigException.class)
            .hasMessageStartingWith("bindings.south.options.http.queue_timeout: value: ");
    }

    @Test
    void theSevenArgumentConstructorKeepsWorkingWithDefaults()
    {
        // Plugins compiled against the first SPI construct UpstreamOptions without queue settings.
        UpstreamOptions options = new UpstreamOptions(java.net.URI.create("http://127.0.0.1:9"), HttpVersion.H2C, 4,
            Duration.ofSeconds(1), Duration.ofSeconds(2), Duration.ofSeconds(3), null);
        assertThat(options.maxQueued()).isEqualTo(UpstreamOptions.DEFAULT_MAX_QUEUED);
        assertThat(options.queueTimeout()).isEqualTo(UpstreamOptions.DEFAULT_QUEUE_TIMEOUT);
    }
}
