package dev.sluice.plugin.otel;

import dev.sluice.api.binding.BindingConfig;
import dev.sluice.api.binding.BindingContext;
import dev.sluice.api.binding.ProxyBinding;
import dev.sluice.api.binding.ProxyBindingFactory;
import dev.sluice.api.config.ConfigException;
import dev.sluice.api.upstream.HttpVersion;
import dev.sluice.api.upstream.Upstream;
import dev.sluice.api.upstream.UpstreamOptions;
import dev.sluice.support.config.Options;
import io.opentelemetry.common.ComponentLoader;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.metrics.MeterProvider;
import io.opentelemetry.exporter.otlp.http.trace.OtlpHttpSpanExporter;
import io.opentelemetry.exporter.otlp.http.trace.OtlpHttpSpanExporterBuilder;
import io.opentelemetry.sdk.resources.Resource;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.samplers.Sampler;
import org.pf4j.Extension;

import java.net.URI;
import java.net.URISyntaxException;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Creates {@code tracing} proxy bindings (plugin {@code otel}): one OpenTelemetry span per exchange, exported over
 * OTLP/HTTP (protobuf) to a collector. Tracing is off unless a chain contains such a binding.
 *
 * <pre>{@code
 * bindings:
 *   north_openai: { type: openai, kind: server, exit: tracing }
 *   tracing:
 *     type: tracing
 *     kind: proxy
 *     exit: keys
 *     options: { endpoint: "http://127.0.0.1:4318/v1/traces", sample_ratio: 0.1 }
 * }</pre>
 *
 * <p>What it creates, outside {@code sluice check}: the SDK's tracer provider (a parent-based ratio sampler, the
 * {@code service.name} resource), an {@link ExportQueue} as its only span processor, and the OTLP exporter with an
 * {@link UpstreamSender}, whose requests go out on the runtime's HTTP client (an upstream for the collector); it schedules the
 * queue's periodic look and the upstream-address refresh on the runtime's scheduler. Under {@code sluice check}
 * ({@link BindingContext#checkOnly()}) it validates the options, reads the header variables, and creates nothing that
 * runs. Options: {@link TracingOptions}; every mistake is a {@link ConfigException} naming its path. Stateless.
 */
@Extension
public final class TracingBindingFactory implements ProxyBindingFactory
{
    /** The binding type this factory creates. */
    public static final String TYPE = "tracing";

    private static final AttributeKey<String> SERVICE_NAME = AttributeKey.stringKey("service.name");
    private static final AttributeKey<String> SERVICE_VERSION = AttributeKey.stringKey("service.version");

    /** @return {@value #TYPE} */
    @Override
    public String type()
    {
        return TYPE;
    }

    /**
     * Validates the options and creates the binding.
     *
     * @throws ConfigException naming the faulty path
     */
    @Override
    public ProxyBinding create(BindingConfig config, BindingContext context)
    {
        config.requireSingleExit("tracing passes every request to its exit", "the binding requests go to");
        String path = config.optionsPath();
        TracingOptions options = Options.bind(config.options(), TracingOptions.class, path);
        String endpoint = endpoint(options.endpoint(), path + ".endpoint");
        Map<String, String> headers = new LinkedHashMap<>();
        for (Map.Entry<String, String> h : options.headers().entrySet())
            headers.put(headerName(h.getKey(), path + ".headers"), headerValue(h.getValue(), path + ".headers." + h.getKey()));
        for (Map.Entry<String, String> h : options.headersFromEnv().entrySet())
        {
            String at = path + ".headers_from_env." + h.getKey();
            String variable = h.getValue();
            if (variable == null || variable.isBlank())
                throw new ConfigException(at, "must be set (expected: the name of an environment variable)");
            String value = context.env(variable);
            if (value == null)
                throw new ConfigException(at, "environment variable " + variable + " is not set");
            headers.put(headerName(h.getKey(), path + ".headers_from_env"), headerValue(value, at));
        }

        if (context.checkOnly())
            return TracingBinding.inert(config.name());

        // The collector is reached through the gateway's own HTTP client: one connection, the export's timeout as
        // its connect, first-byte, idle and total timeouts, a queue of a few batches.
        URI collector = URI.create(endpoint);
        String exportPath = (collector.getRawPath() == null || collector.getRawPath().isEmpty() ? "/" : collector.getRawPath())
            + (collector.getRawQuery() == null ? "" : "?" + collector.getRawQuery());
        Upstream upstream = context.upstream(new UpstreamOptions(
            URI.create(collector.getScheme() + "://" + collector.getRawAuthority()), HttpVersion.HTTP_1_1, 1,
            options.timeout(), options.timeout(), options.timeout(), options.timeout(), 4, options.timeout()));
        OtlpHttpSpanExporterBuilder exporter = OtlpHttpSpanExporter.builder()
            .setEndpoint(endpoint)
            .setTimeout(options.timeout())
            .setConnectTimeout(options.timeout())
            // No retries: the SDK's retry sleeps between attempts on the calling thread. A failed batch is dropped
            // and counted instead.
            .setRetryPolicy(null)
            // The exporter's own metrics would go to the global OpenTelemetry, which a gateway does not set up.
            .setMeterProvider(MeterProvider.noop())
            // Its HTTP sender: ours, on the upstream above; everything else from this plugin's jar.
            .setComponentLoader(UpstreamSender.loader(upstream, exportPath,
                ComponentLoader.forClassLoader(TracingBindingFactory.class.getClassLoader())));
        headers.forEach(exporter::addHeader);
        ExportQueue queue = new ExportQueue(config.name(), exporter.build(), context.executor(), options.queueSize(),
            options.maxBatch());
        String version = TracingBindingFactory.class.getPackage().getImplementationVersion();
        Resource resource = Resource.getDefault().merge(Resource.create(version == null
            ? Attributes.of(SERVICE_NAME, options.serviceName())
            : Attributes.of(SERVICE_NAME, options.serviceName(), SERVICE_VERSION, version)));
        SdkTracerProvider provider = SdkTracerProvider.builder()
            .setResource(resource)
            .setSampler(Sampler.parentBased(Sampler.traceIdRatioBased(options.sampleRatio())))
            .addSpanProcessor(queue)
            .build();
        TracingBinding binding = new TracingBinding(config.name(),
            provider.get("dev.sluice.otel", version == null ? "unknown" : version), provider, queue, context::runtimeStats);
        queue.start(context.scheduler(), options.exportInterval());
        binding.start(context.scheduler());
        return binding;
    }

    /** @return {@code value} if it is an absolute http(s) URL with a host */
    private static String endpoint(String value, String path)
    {
        try
        {
            URI uri = new URI(value);
            String scheme = uri.getScheme();
            if (("http".equalsIgnoreCase(scheme) || "https".equalsIgnoreCase(scheme)) && uri.getHost() != null)
                return value;
        }
        catch (URISyntaxException e)
        {
            // Reported below, like any other value that is no URL.
        }
        throw new ConfigException(path, "value: \"" + value
            + "\" (expected: an http:// or https:// URL such as http://127.0.0.1:4318/v1/traces)");
    }

    /** @return {@code name} if it is an HTTP token (RFC 9110) */
    private static String headerName(String name, String path)
    {
        boolean token = !name.isEmpty();
        for (int i = 0; i < name.length() && token; i++)
        {
            char c = name.charAt(i);
            token = c > 32 && c < 127 && "\"(),/:;<=>?@[\\]{}".indexOf(c) < 0;
        }
        if (!token)
            throw new ConfigException(path, "key: \"" + name + "\" (expected: an HTTP header name)");
        return name;
    }

    /** @return {@code value} if it holds no control characters (no header can be smuggled through it) */
    private static String headerValue(String value, String path)
    {
        if (value == null)
            throw new ConfigException(path, "must be set (expected: a header value)");
        for (int i = 0; i < value.length(); i++)
        {
            char c = value.charAt(i);
            if (c < 32 && c != '\t' || c == 127)
                throw new ConfigException(path, "has a control character (expected: a header value on one line)");
        }
        return value;
    }
}
