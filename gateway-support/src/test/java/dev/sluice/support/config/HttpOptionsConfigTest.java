package dev.sluice.support.config;

import dev.sluice.api.config.ConfigException;
import dev.sluice.api.upstream.HttpVersion;
import dev.sluice.api.upstream.UpstreamOptions;
import dev.sluice.support.json.Json;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class HttpOptionsConfigTest
{
    private static UpstreamOptions bind(String http) throws Exception
    {
        return bind(http, "http://127.0.0.1:9/v1");
    }

    private static UpstreamOptions bind(String http, String url) throws Exception
    {
        HttpOptionsConfig config = http == null ? null
            : Options.bind(Json.MAPPER.readTree(http), HttpOptionsConfig.class, "bindings.south.options.http");
        return HttpOptionsConfig.toUpstreamOptions(config, url, "bindings.south.options.url");
    }

    @Test
    void theDefaultVersionIsH2ForHttpsAndHttp11ForHttp() throws Exception
    {
        assertThat(bind(null, "https://api.openai.com/v1").version()).isEqualTo(HttpVersion.H2);
        assertThat(bind(null, "http://127.0.0.1:9/v1").version()).isEqualTo(HttpVersion.HTTP_1_1);
        assertThat(bind("{\"version\":\"auto\"}", "https://api.openai.com/v1").version()).isEqualTo(HttpVersion.H2);
        assertThat(bind("{\"version\":\"AUTO\"}", "http://127.0.0.1:9/v1").version()).isEqualTo(HttpVersion.HTTP_1_1);
        assertThat(bind("{\"max_connections\":8}", "https://api.openai.com/v1").version()).isEqualTo(HttpVersion.H2);
    }

    @Test
    void bindsEveryVersionSpelling() throws Exception
    {
        String https = "https://api.anthropic.com/v1";
        assertThat(bind("{\"version\":\"h2\"}", https).version()).isEqualTo(HttpVersion.H2);
        assertThat(bind("{\"version\":\"http/2\"}", https).version()).isEqualTo(HttpVersion.H2);
        assertThat(bind("{\"version\":\"HTTP/2\"}", https).version()).isEqualTo(HttpVersion.H2);
        assertThat(bind("{\"version\":\"h2c\"}").version()).isEqualTo(HttpVersion.H2C);
        // Explicit HTTP/1.1 on https stays HTTP/1.1 (over TLS).
        assertThat(bind("{\"version\":\"http/1.1\"}", https).version()).isEqualTo(HttpVersion.HTTP_1_1);
        // h2 on an http URL is kept as written; the runtime speaks it with prior knowledge.
        assertThat(bind("{\"version\":\"h2\"}").version()).isEqualTo(HttpVersion.H2);
    }

    @Test
    void refusesAnUnknownVersionListingEveryAcceptedValue()
    {
        assertThatThrownBy(() -> bind("{\"version\":\"http/3\"}")).isInstanceOf(ConfigException.class)
            .hasMessage("bindings.south.options.http.version: value: \"http/3\" (expected: auto, http/1.1, h2, http/2 or h2c)");
        assertThatThrownBy(() -> bind("{\"version\":\"\"}")).isInstanceOf(ConfigException.class)
            .hasMessageContaining("(expected: auto, http/1.1, h2, http/2 or h2c)");
    }

    @Test
    void bindsACaFileAndRefusesOneThatCannotBeRead(@TempDir Path dir) throws Exception
    {
        Path pem = Files.writeString(dir.resolve("ca.pem"), "-----BEGIN CERTIFICATE-----\n");
        UpstreamOptions options = bind("{\"ca_file\":\"" + pem + "\"}", "https://127.0.0.1:8443/v1");
        assertThat(options.caFile()).isEqualTo(pem);
        assertThat(bind(null).caFile()).isNull();

        Path missing = dir.resolve("missing.pem");
        assertThatThrownBy(() -> bind("{\"ca_file\":\"" + missing + "\"}")).isInstanceOf(ConfigException.class)
            .hasMessage("bindings.south.options.http.ca_file: value: \"" + missing
                + "\" (expected: a readable PEM file of CA certificates)");
        assertThatThrownBy(() -> bind("{\"ca_file\":\"" + dir + "\"}")).isInstanceOf(ConfigException.class)
            .hasMessageStartingWith("bindings.south.options.http.ca_file: value: ");
        assertThatThrownBy(() -> bind("{\"ca_file\":\" \"}")).isInstanceOf(ConfigException.class)
            .hasMessage("bindings.south.options.http.ca_file: value: \" \" (expected: the path of a PEM file)");
        assertThatThrownBy(() -> bind("{\"ca_file\":5}")).isInstanceOf(ConfigException.class)
            .hasMessageStartingWith("bindings.south.options.http.ca_file");
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
