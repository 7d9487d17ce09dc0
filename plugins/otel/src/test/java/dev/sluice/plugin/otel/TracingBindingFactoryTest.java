package dev.sluice.plugin.otel;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.sluice.api.binding.BindingConfig;
import dev.sluice.api.binding.BindingContext;
import dev.sluice.api.binding.BindingKind;
import dev.sluice.api.binding.ProxyBinding;
import dev.sluice.api.config.ConfigException;
import dev.sluice.api.exchange.Attributes;
import dev.sluice.api.exchange.Next;
import dev.sluice.api.exchange.Reply;
import dev.sluice.api.service.Scheduler;
import dev.sluice.api.testing.TestBindingContext;
import dev.sluice.api.testing.TestExchange;
import dev.sluice.api.upstream.Upstream;
import dev.sluice.api.upstream.UpstreamOptions;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.Executor;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/**
 * The {@code tracing} factory's validation, and what it does under {@code sluice check}: it reads its options and the
 * header variables, and touches neither the executor nor the scheduler. What the binding does with real exchanges is
 * tested end to end (gateway-runtime's TracingPluginTest).
 */
class TracingBindingFactoryTest
{
    private static final String PATH = "bindings.tracing.options";

    /** A context for {@code sluice check}: any attempt to run something fails the test. */
    private static final class CheckContext implements BindingContext
    {
        private final TestBindingContext exits = new TestBindingContext("router");

        CheckContext env(String name, String value)
        {
            exits.env(name, value);
            return this;
        }

        @Override
        public Next exit(String bindingName)
        {
            return exits.exit(bindingName);
        }

        @Override
        public Upstream upstream(UpstreamOptions options)
        {
            throw new AssertionError("a tracing binding has no upstream");
        }

        @Override
        public String env(String name)
        {
            return exits.env(name);
        }

        @Override
        public boolean checkOnly()
        {
            return true;
        }

        @Override
        public Executor executor()
        {
            throw new AssertionError("sluice check: nothing may be submitted");
        }

        @Override
        public Scheduler scheduler()
        {
            throw new AssertionError("sluice check: nothing may be scheduled");
        }
    }

    private static BindingConfig config(String options, String exit) throws Exception
    {
        return new BindingConfig("tracing", "tracing", BindingKind.PROXY, new ObjectMapper().readTree(options), exit, List.of());
    }

    private static ProxyBinding create(String options, CheckContext context) throws Exception
    {
        return new TracingBindingFactory().create(config(options, "router"), context);
    }

    private static ConfigException fails(String options, CheckContext context)
    {
        return catchThrowableOfType(ConfigException.class, () -> create(options, context));
    }

    @Test
    void optionsHaveDefaults() throws Exception
    {
        TracingOptions o = dev.sluice.api.config.Options.bind(new ObjectMapper().readTree(
            "{\"endpoint\":\"http://127.0.0.1:4318/v1/traces\"}"), TracingOptions.class, PATH);
        assertThat(o.sampleRatio()).isEqualTo(1.0);
        assertThat(o.serviceName()).isEqualTo("sluice");
        assertThat(o.queueSize()).isEqualTo(2048);
        assertThat(o.maxBatch()).isEqualTo(512);
        assertThat(o.exportInterval()).isEqualTo(Duration.ofSeconds(1));
        assertThat(o.timeout()).isEqualTo(Duration.ofSeconds(5));
        assertThat(o.headers()).isEmpty();
        assertThat(o.headersFromEnv()).isEmpty();
    }

    @Test
    void underCheckItValidatesAndStartsNothing() throws Exception
    {
        ProxyBinding binding = create("{\"endpoint\":\"https://collector.example/v1/traces\",\"sample_ratio\":0.5,"
            + "\"headers_from_env\":{\"authorization\":\"OTLP_AUTH\"}}", new CheckContext().env("OTLP_AUTH", "Bearer t"));
        TestExchange exchange = new TestExchange("gpt-4o");

        Reply reply = binding.handle(exchange, new TestBindingContext("router").exit("router")).toCompletableFuture().join();

        assertThat(reply).isNotNull();
        assertThat(exchange.attribute(Attributes.TRACEPARENT)).as("an inert binding traces nothing").isNull();
        binding.close();
    }

    @Test
    void endpointMustBeAnHttpUrl()
    {
        assertThat(fails("{}", new CheckContext()).getMessage()).contains(PATH + ".endpoint").contains("must be set");
        assertThat(fails("{\"endpoint\":\"127.0.0.1:4318\"}", new CheckContext()).getMessage())
            .contains(PATH + ".endpoint").contains("expected: an http:// or https:// URL");
        assertThat(fails("{\"endpoint\":\"grpc://127.0.0.1:4317\"}", new CheckContext()).getMessage())
            .contains(PATH + ".endpoint");
    }

    @Test
    void rangesAndUnknownKeysNameTheirPath()
    {
        String e = "\"endpoint\":\"http://127.0.0.1:4318/v1/traces\"";
        assertThat(fails("{" + e + ",\"sample_ratio\":1.5}", new CheckContext()).getMessage())
            .contains(PATH + ".sample_ratio").contains("from 0 to 1");
        assertThat(fails("{" + e + ",\"queue_size\":0}", new CheckContext()).getMessage()).contains(PATH + ".queue_size");
        assertThat(fails("{" + e + ",\"queue_size\":10,\"max_batch\":11}", new CheckContext()).getMessage())
            .contains(PATH + ".max_batch");
        assertThat(fails("{" + e + ",\"export_interval\":\"1ms\"}", new CheckContext()).getMessage())
            .contains(PATH + ".export_interval");
        assertThat(fails("{" + e + ",\"timeout\":\"2m\"}", new CheckContext()).getMessage()).contains(PATH + ".timeout");
        assertThat(fails("{" + e + ",\"service_name\":\" \"}", new CheckContext()).getMessage()).contains(PATH + ".service_name");
        assertThat(fails("{" + e + ",\"sample_rate\":0.5}", new CheckContext()).getMessage())
            .contains(PATH + ".sample_rate").contains("unknown key");
    }

    @Test
    void headersAreCheckedAndVariablesMustBeSet()
    {
        String e = "\"endpoint\":\"http://127.0.0.1:4318/v1/traces\"";
        assertThat(fails("{" + e + ",\"headers_from_env\":{\"authorization\":\"NOT_SET\"}}", new CheckContext()).getMessage())
            .contains(PATH + ".headers_from_env.authorization").contains("NOT_SET is not set");
        assertThat(fails("{" + e + ",\"headers\":{\"bad name\":\"v\"}}", new CheckContext()).getMessage())
            .contains(PATH + ".headers").contains("bad name");
        assertThat(fails("{" + e + ",\"headers\":{\"x-a\":\"one\\r\\nx-b: two\"}}", new CheckContext()).getMessage())
            .contains(PATH + ".headers.x-a");
        // The value of a variable is never part of a message.
        ConfigException bad = fails("{" + e + ",\"headers_from_env\":{\"authorization\":\"SECRET\"}}",
            new CheckContext().env("SECRET", "Bearer s3cr3t\nx-evil: 1"));
        assertThat(bad.getMessage()).contains(PATH + ".headers_from_env.authorization").doesNotContain("s3cr3t");
    }

    @Test
    void needsAnExitAndNoRoutes() throws Exception
    {
        ConfigException noExit = catchThrowableOfType(ConfigException.class,
            () -> new TracingBindingFactory().create(config("{\"endpoint\":\"http://h/v1/traces\"}", null), new CheckContext()));
        assertThat(noExit.getMessage()).contains("bindings.tracing.exit");
    }

    @Test
    void finishReasonsKeepTheProvidersWordsOrUseOpenAis()
    {
        assertThat(ExchangeSpan.finishReason(dev.sluice.api.model.StopReason.END_TURN, "end_turn")).isEqualTo("end_turn");
        assertThat(ExchangeSpan.finishReason(dev.sluice.api.model.StopReason.MAX_TOKENS, null)).isEqualTo("length");
        assertThat(ExchangeSpan.finishReason(dev.sluice.api.model.StopReason.TOOL_USE, " ")).isEqualTo("tool_calls");
        assertThat(SpanAttributes.providerName("gemini")).isEqualTo("gcp.gemini");
        assertThat(SpanAttributes.providerName("openai")).isEqualTo("openai");
    }
}
