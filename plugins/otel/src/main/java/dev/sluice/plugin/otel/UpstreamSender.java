package dev.sluice.plugin.otel;

import dev.sluice.api.upstream.Upstream;
import dev.sluice.api.upstream.UpstreamRequest;
import dev.sluice.support.upstream.Bodies;
import io.opentelemetry.common.ComponentLoader;
import io.opentelemetry.sdk.common.CompletableResultCode;
import io.opentelemetry.sdk.common.export.Compressor;
import io.opentelemetry.sdk.common.export.HttpResponse;
import io.opentelemetry.sdk.common.export.HttpSender;
import io.opentelemetry.sdk.common.export.HttpSenderConfig;
import io.opentelemetry.sdk.common.export.HttpSenderProvider;
import io.opentelemetry.sdk.common.export.MessageWriter;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * The OTLP exporter's HTTP sender, on the gateway's own HTTP client: each export is one non-blocking
 * {@link Upstream#send(UpstreamRequest)} on the shared client pool, selectors and timers — no thread of its own, none
 * of the JDK's {@code HttpClient}, and no pool thread held while the collector answers. The exporter finds it through
 * the {@link ComponentLoader} given to its builder ({@link #loader}), the public way OpenTelemetry lets a caller choose
 * a sender.
 *
 * <p>A batch is encoded once into an array of the size the exporter announces (and compressed if the exporter was
 * told to), sent with the exporter's content type and headers, and answered with at most 64 KiB of the collector's
 * body (the exporter reads only the status, and the body for an error message). Thread-safe; stateless per export.
 */
final class UpstreamSender implements HttpSender
{
    private static final int MAX_RESPONSE_BYTES = 64 << 10;

    private final Upstream upstream;
    private final String path;
    private final String contentType;
    private final Compressor compressor;
    private final Supplier<Map<String, List<String>>> headers;

    private UpstreamSender(Upstream upstream, String path, HttpSenderConfig config)
    {
        this.upstream = upstream;
        this.path = path;
        this.contentType = config.getContentType();
        this.compressor = config.getCompressor();
        this.headers = config.getHeadersSupplier();
    }

    /**
     * @param upstream the collector's upstream (its base URL is the endpoint's scheme, host and port)
     * @param path     the endpoint's path and query, such as {@code /v1/traces}
     * @return a component loader that gives the exporter this sender and loads everything else from {@code fallback}
     */
    static ComponentLoader loader(Upstream upstream, String path, ComponentLoader fallback)
    {
        HttpSenderProvider provider = config -> new UpstreamSender(upstream, path, config);
        return new ComponentLoader()
        {
            @Override
            @SuppressWarnings("unchecked")
            public <T> Iterable<T> load(Class<T> spi)
            {
                return spi == HttpSenderProvider.class ? List.of((T)provider) : fallback.load(spi);
            }
        };
    }

    @Override
    public void send(MessageWriter writer, Consumer<HttpResponse> onResponse, Consumer<Throwable> onError)
    {
        byte[] body;
        List<Map.Entry<String, String>> requestHeaders = new ArrayList<>();
        try
        {
            ByteArrayOutputStream bytes = new ByteArrayOutputStream(Math.max(32, writer.getContentLength()));
            if (compressor == null)
            {
                writer.writeMessage(bytes);
            }
            else
            {
                requestHeaders.add(Map.entry("Content-Encoding", compressor.getEncoding()));
                try (OutputStream compressed = compressor.compress(bytes))
                {
                    writer.writeMessage(compressed);
                }
            }
            body = bytes.toByteArray();
            Map<String, List<String>> extra = headers == null ? null : headers.get();
            if (extra != null)
                extra.forEach((name, values) -> values.forEach(value -> requestHeaders.add(Map.entry(name, value))));
        }
        catch (IOException | RuntimeException e)
        {
            onError.accept(e);
            return;
        }
        upstream.send(new UpstreamRequest("POST", path, requestHeaders, body, contentType)).whenComplete((response, failure) ->
        {
            if (failure != null)
            {
                onError.accept(failure);
                return;
            }
            Bodies.readPrefix(response.body(), response.contentLength(), MAX_RESPONSE_BYTES)
                .whenComplete((answer, readFailure) -> onResponse.accept(new Answer(response.status(),
                    answer == null ? new byte[0] : answer)));
        });
    }

    @Override
    public CompletableResultCode shutdown()
    {
        // The upstream is the runtime's: it closes it with the gateway.
        return CompletableResultCode.ofSuccess();
    }

    /** The collector's answer as the exporter reads it. */
    private record Answer(int status, byte[] body) implements HttpResponse
    {
        @Override
        public int getStatusCode()
        {
            return status;
        }

        @Override
        public String getStatusMessage()
        {
            return "";
        }

        @Override
        public byte[] getResponseBody()
        {
            return body;
        }
    }
}
