package dev.sluice.runtime;

import dev.sluice.support.json.Json;
import com.fasterxml.jackson.databind.JsonNode;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Flow;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;

/**
 * A Gemini API client for tests, over plain HTTP/1.1 ({@code java.net.http}): {@code models/{model}:generateContent}
 * and {@code models/{model}:streamGenerateContent?alt=sse}, the API key in {@code x-goog-api-key}, JSON read with
 * Jackson. The tests drive the gateway with the official google-genai SDK; this client is for the cases that need
 * exactly what went over the wire (an error event, then an abnormal end). Blocking: for test threads only.
 */
final class GeminiRawClient
{
    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
        .connectTimeout(Duration.ofSeconds(5)).build();
    private final String base;
    private final String apiKey;

    /**
     * @param base   the API base, e.g. {@code http://127.0.0.1:8080/v1beta}
     * @param apiKey the client's key, sent as {@code x-goog-api-key}
     */
    GeminiRawClient(String base, String apiKey)
    {
        this.base = base;
        this.apiKey = apiKey;
    }

    /**
     * {@code POST models/{model}:streamGenerateContent?alt=sse}, read to the end. A broken stream is not thrown:
     * it is returned in {@link Stream#failure()} with everything received before it.
     *
     * <p>The body is collected by a subscriber of its own rather than {@code BodyHandlers.ofInputStream()}, whose
     * stream throws as soon as the connection fails even when bytes received before the failure are still unread:
     * the last events before an abnormal end (the error event) are exactly what a test needs to see.</p>
     *
     * @param model the model, written into the path as is
     * @param body  the request JSON
     * @return the status, the {@code data:} events parsed as JSON, and how the stream ended
     */
    Stream stream(String model, String body)
    {
        HttpRequest request = request(model + ":streamGenerateContent?alt=sse", body);
        Collector collector = new Collector();
        AtomicReference<HttpResponse.ResponseInfo> info = new AtomicReference<>();
        http.sendAsync(request, responseInfo ->
        {
            info.set(responseInfo);
            return HttpResponse.BodySubscribers.fromSubscriber(collector);
        }).whenComplete((response, failure) -> collector.done.complete(failure));
        Throwable failure;
        try
        {
            failure = collector.done.get(30, TimeUnit.SECONDS);
        }
        catch (InterruptedException x)
        {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(x);
        }
        catch (ExecutionException | TimeoutException x)
        {
            throw new IllegalStateException("stream did not end", x);
        }
        if (info.get() == null)
            throw new IllegalStateException("no response", failure);
        String raw = collector.bytes.toString(StandardCharsets.UTF_8);
        String contentType = info.get().headers().firstValue("content-type").orElse("");
        return new Stream(info.get().statusCode(), contentType, events(raw), raw, failure);
    }

    /** Splits an SSE body into the payloads of its {@code data:} lines, one per event, parsed as JSON. */
    private static List<JsonNode> events(String raw)
    {
        List<JsonNode> events = new ArrayList<>();
        StringBuilder data = new StringBuilder();
        for (String line : raw.split("\r\n|\n|\r", -1))
        {
            if (line.isEmpty())
            {
                if (!data.isEmpty())
                    events.add(parse(data.toString()));
                data.setLength(0);
            }
            else if (line.startsWith("data:"))
            {
                if (!data.isEmpty())
                    data.append('\n');
                data.append(line.startsWith("data: ") ? line.substring(6) : line.substring(5));
            }
        }
        if (!data.isEmpty())
            events.add(parse(data.toString()));
        return events;
    }

    private HttpRequest request(String pathAndQuery, String body)
    {
        return HttpRequest.newBuilder(URI.create(base + "/models/" + pathAndQuery))
            .timeout(Duration.ofSeconds(20))
            .header("content-type", "application/json")
            .header("x-goog-api-key", apiKey)
            .POST(HttpRequest.BodyPublishers.ofString(body))
            .build();
    }

    private static JsonNode parse(String json)
    {
        try
        {
            return Json.MAPPER.readTree(json);
        }
        catch (IOException x)
        {
            return null;
        }
    }

    /** The text of the first candidate's parts, concatenated; empty when there is none. */
    static String text(JsonNode response)
    {
        StringBuilder text = new StringBuilder();
        for (JsonNode part : response.path("candidates").path(0).path("content").path("parts"))
        {
            if (part.has("text") && !part.path("thought").asBoolean(false))
                text.append(part.get("text").asText());
        }
        return text.toString();
    }

    /** Keeps every body byte in arrival order and how the body ended ({@code null}: cleanly). */
    private static final class Collector implements Flow.Subscriber<List<ByteBuffer>>
    {
        private final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        private final CompletableFuture<Throwable> done = new CompletableFuture<>();

        @Override
        public void onSubscribe(Flow.Subscription subscription)
        {
            subscription.request(Long.MAX_VALUE);
        }

        @Override
        public void onNext(List<ByteBuffer> buffers)
        {
            // Flow delivers onNext calls one at a time, and completing `done` publishes the bytes to the reader.
            for (ByteBuffer buffer : buffers)
            {
                byte[] chunk = new byte[buffer.remaining()];
                buffer.get(chunk);
                bytes.writeBytes(chunk);
            }
        }

        @Override
        public void onError(Throwable failure)
        {
            done.complete(failure);
        }

        @Override
        public void onComplete()
        {
            done.complete(null);
        }
    }

    /**
     * A streamed answer read to its end.
     *
     * @param status      the HTTP status
     * @param contentType the response content type
     * @param events      the {@code data:} payloads parsed as JSON ({@code null} entries for payloads that were not)
     * @param raw         the whole body as read
     * @param failure     how reading failed (the stream was cut), or {@code null} when it ended cleanly
     */
    record Stream(int status, String contentType, List<JsonNode> events, String raw, Throwable failure)
    {
        /** @return the text of all events, concatenated */
        String text()
        {
            StringBuilder text = new StringBuilder();
            for (JsonNode event : events)
            {
                if (event != null)
                    text.append(GeminiRawClient.text(event));
            }
            return text.toString();
        }

        /** @return the last {@code finishReason} sent, or {@code null} */
        String finishReason()
        {
            String reason = null;
            for (JsonNode event : events)
            {
                JsonNode r = event == null ? null : event.path("candidates").path(0).get("finishReason");
                if (r != null && r.isTextual())
                    reason = r.asText();
            }
            return reason;
        }

        /** @return whether any event is an {@code error} object */
        boolean hasErrorEvent()
        {
            for (JsonNode event : events)
            {
                if (event == null || event.has("error"))
                    return true;
            }
            return false;
        }
    }
}
