package dev.sluice.mock;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * One request as the {@link MockProvider} received it, for tests to assert what a gateway sent upstream.
 *
 * <p>Immutable and safe to read from any thread. Header names keep the case they had on the wire (HTTP/2 sends
 * them in lower case); the lookups ignore case.</p>
 *
 * <pre>{@code
 * RecordedRequest sent = mock.requests().get(0);
 * assertThat(sent.dialect()).isEqualTo(MockDialect.ANTHROPIC);
 * assertThat(sent.header("x-api-key")).isEqualTo("sk-ant-test");
 * assertThat(sent.bodyAsString()).contains("\"max_tokens\":1024");
 * assertThat(sent.httpVersion()).isEqualTo("HTTP/2.0");
 * }</pre>
 *
 * @param method the HTTP method
 * @param path the path as it was sent (percent-encoding kept), e.g. {@code /v1/chat/completions} or
 * {@code /v1beta/models/gemini-2.0-flash:streamGenerateContent}
 * @param query the raw query string (e.g. {@code alt=sse}), or {@code null} when there is none
 * @param headers the request headers in arrival order, repeated names repeated
 * @param body the request body (empty, never {@code null}); the accessor returns a copy
 * @param httpVersion the HTTP version as Jetty saw it: {@code HTTP/1.1} or {@code HTTP/2.0}
 * @param protocol the connection protocol as Jetty names it (see {@code ConnectionMetaData.getProtocol()})
 * @param dialect the API of the chat endpoint the request was sent to, or {@code null} for other paths
 * @param model the model of a chat request (from the body, or from the path for Gemini), or {@code null} for other
 * requests or when the body names none
 * @param stream whether the chat request asked for a streamed answer ({@code "stream": true}, or Gemini's
 * {@code streamGenerateContent})
 * @param arrivedAt wall-clock time the request began
 * @param arrivalNanos {@link System#nanoTime()} when the request began, to measure intervals between requests
 */
public record RecordedRequest(
    String method,
    String path,
    String query,
    List<Header> headers,
    byte[] body,
    String httpVersion,
    String protocol,
    MockDialect dialect,
    String model,
    boolean stream,
    Instant arrivedAt,
    long arrivalNanos)
{
    // Copies the header list; the body array is taken as is (the mock never touches it again).
    public RecordedRequest
    {
        Objects.requireNonNull(method, "method");
        Objects.requireNonNull(path, "path");
        headers = List.copyOf(headers);
        body = body == null ? new byte[0] : body;
    }

    /** @return a copy of the request body */
    @Override
    public byte[] body()
    {
        return body.clone();
    }

    /** @return the request body decoded as UTF-8 */
    public String bodyAsString()
    {
        return new String(body, StandardCharsets.UTF_8);
    }

    /** @return the number of body bytes */
    public int bodyLength()
    {
        return body.length;
    }

    /**
     * @param name a header name, any case
     * @return the first value of that header, or {@code null} if it was not sent
     */
    public String header(String name)
    {
        for (Header header : headers)
        {
            if (header.name().equalsIgnoreCase(name))
                return header.value();
        }
        return null;
    }

    /**
     * @param name a header name, any case
     * @return every value of that header in arrival order, empty if it was not sent
     */
    public List<String> headerValues(String name)
    {
        List<String> values = new ArrayList<>(1);
        for (Header header : headers)
        {
            if (header.name().equalsIgnoreCase(name))
                values.add(header.value());
        }
        return values;
    }

    /**
     * @param name a header name, any case
     * @return whether the header was sent at all
     */
    public boolean hasHeader(String name)
    {
        return header(name) != null;
    }

    @Override
    public String toString()
    {
        return "RecordedRequest[" + method + " " + path + (query == null ? "" : "?" + query) + " " + httpVersion +
            ", " + (dialect == null ? "" : dialect + " ") + "model=" + model + (stream ? " streamed" : "") + ", " +
            headers.size() + " headers, " + body.length + " body bytes]";
    }

    /**
     * One request header.
     *
     * @param name the name as received
     * @param value the value as received
     */
    public record Header(String name, String value)
    {
    }
}
