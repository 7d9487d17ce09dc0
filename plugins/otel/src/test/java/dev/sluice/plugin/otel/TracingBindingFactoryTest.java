package dev.sluice.plugin.otel;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.sluice.api.binding.BindingConfig;
import dev.sluice.api.binding.BindingConfig.BindingKind;
import dev.sluice.api.binding.ProxyBinding;
import dev.sluice.api.config.ConfigException;
import dev.sluice.api.exchange.Attributes;
import dev.sluice.api.exchange.Reply;
import dev.sluice.api.testing.TestBindingContext;
import dev.sluice.api.testing.TestExchange;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;
import dev.sluice.api.model.ChatResponse.StopReason;

/**
 * The {@code tracing} factory's validation, and what it does under {@code sluice check}: it reads its options and the
 * header variables, and touches neither the executor nor the scheduler. What the binding does with real exchanges is
 * tested end to end (gateway-runtime's TracingPluginTest).
 */
class TracingBindingFactoryTest
{
    private static final String PATH = "bindings.tracing.options";

    /** A context for {@code sluice check}: it refuses executor tasks and records anything scheduled. */
    private static TestBindingContext checkContext()
    {
        return new TestBindingContext("router").checkOnly(true);
    }

    private static BindingConfig config(String options, String exit) throws Exception
    {
        return new BindingConfig("tracing", "tracing", BindingKind.PROXY, new ObjectMapper().readTree(options), exit, List.of());
    }

    private static ProxyBinding create(String options, TestBindingContext context) throws Exception
    {
        return new TracingBindingFactory().create(config(options, "router"), context);
    }

    private static ConfigException fails(String options, TestBindingContext context)
    {
        return catchThrowableOfType(ConfigException.class, () -> create(options, context));
    }

    @Test
    void optionsHaveDefaults() throws Exception
    {
        TracingOptions o = dev.sluice.support.config.Options.bind(new ObjectMapper().readTree(
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
        TestBindingContext context = checkContext().env("OTLP_AUTH", "Bearer t");
        ProxyBinding binding = create("{\"endpoint\":\"https://collector.example/v1/traces\",\"sample_ratio\":0.5,"
            + "\"headers_from_env\":{\"authorization\":\"OTLP_AUTH\"}}", context);
        TestExchange exchange = new TestExchange("gpt-4o");

        Reply reply = binding.handle(exchange, new TestBindingContext("router").exit("router")).toCompletableFuture().join();

        assertThat(reply).isNotNull();
        assertThat(exchange.attribute(Attributes.TRACEPARENT)).as("an inert binding traces nothing").isNull();
        binding.close();
        assertThat(context.scheduledTasks()).as("sluice check: nothing scheduled").isEmpty();
        assertThat(context.submitted()).as("sluice check: nothing submitted").isEmpty();
    }

    @Test
    void endpointMustBeAnHttpUrl()
    {
        assertThat(fails("{}", checkContext()).getMessage()).contains(PATH + ".endpoint").contains("must be set");
        assertThat(fails("{\"endpoint\":\"127.0.0.1:4318\"}", checkContext()).getMessage())
            .contains(PATH + ".endpoint").contains("expected: an http:// or https:// URL");
        assertThat(fails("{\"endpoint\":\"grpc://127.0.0.1:4317\"}", checkContext()).getMessage())
            .contains(PATH + ".endpoint");
    }

    @Test
    void rangesAndUnknownKeysNameTheirPath()
    {
        String e = "\"endpoint\":\"http://127.0.0.1:4318/v1/traces\"";
        assertThat(fails("{" + e + ",\"sample_ratio\":1.5}", checkContext()).getMessage())
            .contains(PATH + ".sample_ratio").contains("from 0 to 1");
        assertThat(fails("{" + e + ",\"queue_size\":0}", checkContext()).getMessage()).contains(PATH + ".queue_size");
        assertThat(fails("{" + e + ",\"queue_size\":10,\"max_batch\":11}", checkContext()).getMessage())
            .contains(PATH + ".max_batch");
        assertThat(fails("{" + e + ",\"export_interval\":\"1ms\"}", checkContext()).getMessage())
            .contains(PATH + ".export_interval");
        assertThat(fails("{" + e + ",\"timeout\":\"2m\"}", checkContext()).getMessage()).contains(PATH + ".timeout");
        assertThat(fails("{" + e + ",\"service_name\":\" \"}", checkContext()).getMessage()).contains(PATH + ".service_name");
        assertThat(fails("{" + e + ",\"sample_rate\":0.5}", checkContext()).getMessage())
            .contains(PATH + ".sample_rate").contains("unknown key");
    }

    @Test
    void headersAreCheckedAndVariablesMustBeSet()
    {
        String e = "\"endpoint\":\"http://127.0.0.1:4318/v1/traces\"";
        assertThat(fails("{" + e + ",\"headers_from_env\":{\"authorization\":\"NOT_SET\"}}", checkContext()).getMessage())
            .contains(PATH + ".headers_from_env.authorization").contains("NOT_SET is not set");
        assertThat(fails("{" + e + ",\"headers\":{\"bad name\":\"v\"}}", checkContext()).getMessage())
            .contains(PATH + ".headers").contains("bad name");
        assertThat(fails("{" + e + ",\"headers\":{\"x-a\":\"one\\r\\nx-b: two\"}}", checkContext()).getMessage())
            .contains(PATH + ".headers.x-a");
        // The value of a variable is never part of a message.
        ConfigException bad = fails("{" + e + ",\"headers_from_env\":{\"authorization\":\"SECRET\"}}",
            checkContext().env("SECRET", "Bearer s3cr3t\nx-evil: 1"));
        assertThat(bad.getMessage()).contains(PATH + ".headers_from_env.authorization").doesNotContain("s3cr3t");
    }

    @Test
    void needsAnExitAndNoRoutes() throws Exception
    {
        ConfigException noExit = catchThrowableOfType(ConfigException.class,
            () -> new TracingBindingFactory().create(config("{\"endpoint\":\"http://h/v1/traces\"}", null), checkContext()));
        assertThat(noExit.getMessage()).contains("bindings.tracing.exit");
    }

    @Test
    void finishReasonsKeepTheProvidersWordsOrUseOpenAis()
    {
        assertThat(ExchangeSpan.finishReason(StopReason.END_TURN, "end_turn")).isEqualTo("end_turn");
        assertThat(ExchangeSpan.finishReason(StopReason.MAX_TOKENS, null)).isEqualTo("length");
        assertThat(ExchangeSpan.finishReason(StopReason.TOOL_USE, " ")).isEqualTo("tool_calls");
        assertThat(SpanAttributes.providerName("gemini")).isEqualTo("gcp.gemini");
        assertThat(SpanAttributes.providerName("openai")).isEqualTo("openai");
    }
}
