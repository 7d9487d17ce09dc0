package dev.sluice.mock;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;

/**
 * One request to a {@link MockProvider}, answered whole: what a dialect's codec test sends the mock to check that the
 * codec and the mock agree on the wire format (a request the codec encoded is accepted, the mock's answer — plain or
 * streamed — decodes). A test helper: it blocks the calling thread, over one shared HTTP/1.1 client.
 *
 * <pre>{@code
 * MockCall.Answer answer = MockCall.post(mock, "/v1/chat/completions", Map.of(), codec.encodeRequest(request));
 * ChatResponse response = codec.decodeResponse(answer.body());
 * }</pre>
 */
public final class MockCall
{
    private static final HttpClient CLIENT = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
        .connectTimeout(Duration.ofSeconds(10)).build();

    private MockCall()
    {
    }

    /**
     * The mock's answer.
     *
     * @param status      the HTTP status
     * @param contentType the {@code Content-Type}, or {@code null}
     * @param body        the whole body (a stream's every event)
     */
    public record Answer(int status, String contentType, byte[] body)
    {
        /** @return the body as UTF-8 text */
        public String text()
        {
            return new String(body, StandardCharsets.UTF_8);
        }
    }

    /**
     * Posts {@code body} as JSON to {@code path} (below {@link MockProvider#rootUrl()}, query included) with
     * {@code headers}, and waits for the whole answer.
     */
    public static Answer post(MockProvider mock, String path, Map<String, String> headers, byte[] body)
    {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(mock.rootUrl() + path))
            .timeout(Duration.ofSeconds(30)).header("content-type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofByteArray(body));
        headers.forEach(request::header);
        try
        {
            HttpResponse<byte[]> response = CLIENT.send(request.build(), HttpResponse.BodyHandlers.ofByteArray());
            return new Answer(response.statusCode(), response.headers().firstValue("content-type").orElse(null),
                response.body());
        }
        catch (IOException e)
        {
            throw new UncheckedIOException(e);
        }
        catch (InterruptedException e)
        {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while waiting for the mock", e);
        }
    }
}
