package dev.sluice.mock;

import java.io.ByteArrayOutputStream;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.eclipse.jetty.client.HttpClient;
import org.eclipse.jetty.client.Request;
import org.eclipse.jetty.client.Result;
import org.eclipse.jetty.client.StringRequestContent;
import org.eclipse.jetty.client.transport.HttpClientConnectionFactory;
import org.eclipse.jetty.client.transport.HttpClientTransportDynamic;
import org.eclipse.jetty.http.HttpFields;
import org.eclipse.jetty.http.HttpMethod;
import org.eclipse.jetty.http.HttpVersion;
import org.eclipse.jetty.http2.client.HTTP2Client;
import org.eclipse.jetty.http2.client.transport.ClientConnectionFactoryOverHTTP2;
import org.eclipse.jetty.io.ArrayByteBufferPool;
import org.eclipse.jetty.io.ClientConnector;
import org.eclipse.jetty.util.thread.QueuedThreadPool;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A started {@link MockProvider} (on a tracking buffer pool) and a Jetty client speaking HTTP/1.1 or h2c to it, for
 * the dialect tests. {@link #close()} stops both and asserts the server leaked no buffer.
 */
final class MockHttp implements AutoCloseable
{
    static final ObjectMapper JSON = new ObjectMapper();
    static final Duration WAIT = Duration.ofSeconds(10);

    private final ArrayByteBufferPool.Tracking pool = new ArrayByteBufferPool.Tracking();
    private final MockProvider mock;
    private final HttpClient client;

    /** The client's HTTP version. */
    enum Transport
    {
        HTTP_1_1(HttpVersion.HTTP_1_1),
        H2C(HttpVersion.HTTP_2);

        final HttpVersion version;

        Transport(HttpVersion version)
        {
            this.version = version;
        }
    }

    MockHttp(MockProvider.Builder builder) throws Exception
    {
        mock = builder.byteBufferPool(pool).start();
        QueuedThreadPool threads = new QueuedThreadPool();
        threads.setName("mock-dialect-test-client");
        ClientConnector connector = new ClientConnector();
        connector.setExecutor(threads);
        client = new HttpClient(new HttpClientTransportDynamic(connector, HttpClientConnectionFactory.HTTP11,
            new ClientConnectionFactoryOverHTTP2.HTTP2(new HTTP2Client(connector))));
        client.setExecutor(threads);
        client.setFollowRedirects(false);
        client.start();
    }

    MockProvider mock()
    {
        return mock;
    }

    /** @return a POST of {@code json} to {@code pathAndQuery} (e.g. {@code /v1/messages}) with the given headers */
    Request post(Transport transport, String pathAndQuery, String json, Map<String, String> headers)
    {
        Request request = client.newRequest(URI.create(mock.rootUrl() + pathAndQuery))
            .version(transport.version)
            .method(HttpMethod.POST)
            .timeout(WAIT.toMillis(), TimeUnit.MILLISECONDS)
            .body(new StringRequestContent("application/json", json));
        headers.forEach((name, value) -> request.headers(fields -> fields.put(name, value)));
        return request;
    }

    /** Sends and waits for the whole exchange, successful or not. */
    Reply send(Request request) throws Exception
    {
        ByteArrayOutputStream body = new ByteArrayOutputStream();
        CompletableFuture<Result> done = new CompletableFuture<>();
        request.onResponseContent((response, content) ->
        {
            byte[] bytes = new byte[content.remaining()];
            content.get(bytes);
            synchronized (body)
            {
                body.write(bytes, 0, bytes.length);
            }
        });
        request.send(done::complete);
        Result result = done.get(WAIT.toSeconds(), TimeUnit.SECONDS);
        String text;
        synchronized (body)
        {
            text = body.toString(StandardCharsets.UTF_8);
        }
        return new Reply(result.getResponse().getStatus(), result.getResponse().getHeaders(), text,
            result.getFailure());
    }

    @Override
    public void close() throws Exception
    {
        client.stop();
        mock.close();
        // Connections torn down by close() may hand their buffers back a moment later: wait a little for that.
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (!pool.getLeaks().isEmpty() && System.nanoTime() < deadline)
            Thread.sleep(10);
        assertThat(pool.getLeaks()).as(pool::dumpLeaks).isEmpty();
    }

    /**
     * One finished exchange.
     *
     * @param status the response status
     * @param headers the response headers
     * @param body the response body as received (up to a cut)
     * @param failure why the exchange failed (a cut), or {@code null}
     */
    record Reply(int status, HttpFields headers, String body, Throwable failure)
    {
        /** Asserts the exchange completed and returns this. */
        Reply ok()
        {
            assertThat(failure).as("failure of %s", body).isNull();
            return this;
        }

        JsonNode json() throws Exception
        {
            return JSON.readTree(body);
        }

        /**
         * Parses the body as server-sent events separated by blank lines ({@code \n\n}, or {@code \r\n\r\n} when
         * {@code crlf}); asserts every line is a field and that no event is left unterminated.
         */
        List<Sse> events(boolean crlf)
        {
            String eol = crlf ? "\r\n" : "\n";
            String separator = eol + eol;
            assertThat(body).as("the body ends with a blank line").endsWith(separator);
            List<Sse> events = new ArrayList<>();
            for (String block : body.substring(0, body.length() - separator.length()).split(separator, -1))
            {
                String event = null;
                String data = null;
                for (String line : block.split(eol, -1))
                {
                    if (line.startsWith("event: "))
                        event = line.substring("event: ".length());
                    else if (line.startsWith("data: "))
                        data = line.substring("data: ".length());
                    else
                        throw new AssertionError("not an SSE field line: " + line + " in " + block);
                }
                assertThat(data).as("data of %s", block).isNotNull();
                events.add(new Sse(event, data));
            }
            return events;
        }
    }

    /**
     * One server-sent event.
     *
     * @param event the {@code event:} name, or {@code null}
     * @param data the {@code data:}
     */
    record Sse(String event, String data)
    {
        JsonNode json() throws Exception
        {
            return JSON.readTree(data);
        }
    }
}
