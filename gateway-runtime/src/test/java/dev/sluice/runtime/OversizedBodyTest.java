package dev.sluice.runtime;

import com.fasterxml.jackson.databind.JsonNode;
import dev.sluice.support.json.Json;
import dev.sluice.mock.MockProvider;
import org.eclipse.jetty.client.AsyncRequestContent;
import org.eclipse.jetty.client.BytesRequestContent;
import org.eclipse.jetty.client.ContentResponse;
import org.eclipse.jetty.http.HttpMethod;
import org.eclipse.jetty.http.HttpVersion;
import org.eclipse.jetty.io.ArrayByteBufferPool;
import org.eclipse.jetty.util.Callback;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A body over {@code limits.max_body_bytes} is answered 413 in the client's dialect, and the client can read that
 * answer: a body at most 2 MiB over the cap is read and discarded before the answer, so a client that writes its whole
 * body before reading (most do) gets the 413, not a reset, and its connection stays usable; a larger one is answered at
 * once and the connection closed; a client that asked {@code Expect: 100-continue} is answered without sending it.
 * Raw sockets, so that what the client wrote and read on one connection is exact; jetty-client over HTTP/1.1 and h2c.
 */
class OversizedBodyTest
{
    private static final int CAP = 65536;
    private static final String CHAT = "/v1/chat/completions";

    @TempDir
    static Path dir;

    private static MockProvider mock;
    private static GatewayHarness harness;
    private static ArrayByteBufferPool.Tracking pool;

    @BeforeAll
    static void start() throws Exception
    {
        mock = MockProvider.builder().start();
        pool = new ArrayByteBufferPool.Tracking();
        harness = GatewayHarness.start(dir, OpenAiEndToEndTest.config(mock.baseUrl(), "http/1.1"), TestDist.plugins(),
            Map.of("MOCK_KEY", "k"), pool);
    }

    @AfterAll
    static void stop() throws Exception
    {
        try
        {
            if (harness != null)
                harness.close();
        }
        finally
        {
            if (mock != null)
                mock.close();
        }
    }

    @AfterEach
    void nothingReachedTheProviderButTheFollowUps()
    {
        assertThat(dev.sluice.runtime.internal.http.OnceCallback.doubleCompletions()).isZero();
        mock.clearRecords();
    }

    private static byte[] chatBody(int contentChars)
    {
        return ("{\"model\":\"gpt-4o\",\"messages\":[{\"role\":\"user\",\"content\":\"" + "x".repeat(contentChars) + "\"}]}")
            .getBytes(StandardCharsets.UTF_8);
    }

    private static byte[] head(String... lines)
    {
        StringBuilder b = new StringBuilder("POST " + CHAT + " HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n");
        for (String line : lines)
            b.append(line).append("\r\n");
        return b.append("\r\n").toString().getBytes(StandardCharsets.US_ASCII);
    }

    @Test
    void bodyOverTheCapByContentLengthIsReadThen413AndTheConnectionServesTheNextRequest() throws Exception
    {
        byte[] big = chatBody(CAP + 40_000);
        byte[] small = chatBody(2);
        try (Socket socket = socket())
        {
            OutputStream out = socket.getOutputStream();
            // The whole body is written before anything is read: a gateway that answered and closed first would reset it.
            out.write(head("Content-Length: " + big.length));
            out.write(big);
            out.flush();
            RawResponse refused = RawResponse.read(socket.getInputStream());
            assertOpenAi413(refused, "request body is " + big.length + " bytes, over the limit of " + CAP + " bytes");
            assertThat(refused.headers().get("connection")).as("the connection stays open").isNull();

            out.write(head("Content-Length: " + small.length));
            out.write(small);
            out.flush();
            RawResponse served = RawResponse.read(socket.getInputStream());
            assertThat(served.status()).as(served.body()).isEqualTo(200);
        }
        assertThat(mock.requestCount()).as("only the small request reached the provider").isEqualTo(1);
    }

    @Test
    void chunkedBodyOverTheCapIsReadThen413AndTheConnectionServesTheNextRequest() throws Exception
    {
        byte[] big = chatBody(CAP + 300_000);
        byte[] small = chatBody(2);
        try (Socket socket = socket())
        {
            OutputStream out = socket.getOutputStream();
            out.write(head("Transfer-Encoding: chunked"));
            for (int at = 0; at < big.length; at += 8192)
            {
                int n = Math.min(8192, big.length - at);
                out.write((Integer.toHexString(n) + "\r\n").getBytes(StandardCharsets.US_ASCII));
                out.write(big, at, n);
                out.write("\r\n".getBytes(StandardCharsets.US_ASCII));
            }
            out.write("0\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
            out.flush();
            RawResponse refused = RawResponse.read(socket.getInputStream());
            assertOpenAi413(refused, "request body is over the limit of " + CAP + " bytes");

            out.write(head("Content-Length: " + small.length));
            out.write(small);
            out.flush();
            assertThat(RawResponse.read(socket.getInputStream()).status()).isEqualTo(200);
        }
        assertThat(mock.requestCount()).isEqualTo(1);
    }

    @Test
    void bodyMoreThan2MiBOverTheCapIsAnsweredAtOnceAndTheConnectionClosed() throws Exception
    {
        long declared = CAP + (2L << 20) + 1;
        try (Socket socket = socket())
        {
            // Only the head: the answer must not wait for a body the gateway will not read.
            socket.getOutputStream().write(head("Content-Length: " + declared));
            socket.getOutputStream().flush();
            RawResponse refused = RawResponse.read(socket.getInputStream());
            assertOpenAi413(refused, "request body is " + declared + " bytes, over the limit of " + CAP + " bytes");
            assertThat(refused.headers().get("connection")).isEqualToIgnoringCase("close");
            assertThat(RawResponse.closes(socket.getInputStream())).as("the gateway closed the connection").isTrue();
        }
    }

    @Test
    void chunkedBodyMoreThan2MiBOverTheCapIsAnsweredOnceOverTheBoundAndTheConnectionClosed() throws Exception
    {
        try (Socket socket = socket())
        {
            OutputStream out = socket.getOutputStream();
            out.write(head("Transfer-Encoding: chunked"));
            byte[] chunk = new byte[16384];
            java.util.Arrays.fill(chunk, (byte)'x');
            // Writes chunks, never ending the body, until the answer is there or a little past cap + 2 MiB: the answer
            // comes once the gateway has discarded 2 MiB over the cap, without the body's end.
            long written = 0;
            long enough = CAP + (2L << 20) + 4 * chunk.length;
            InputStream in = socket.getInputStream();
            try
            {
                while (written < enough && in.available() == 0)
                {
                    out.write((Integer.toHexString(chunk.length) + "\r\n").getBytes(StandardCharsets.US_ASCII));
                    out.write(chunk);
                    out.write("\r\n".getBytes(StandardCharsets.US_ASCII));
                    written += chunk.length;
                }
            }
            catch (IOException closed)
            {
                // The gateway answered and closed while this was writing: read its answer.
            }
            RawResponse refused = RawResponse.read(in);
            assertOpenAi413(refused, "request body is over the limit of " + CAP + " bytes");
            assertThat(refused.headers().get("connection")).isEqualToIgnoringCase("close");
            assertThat(written).as("read up to 2 MiB over the cap, not more").isGreaterThan((long)CAP + (2L << 20));
        }
        assertThat(mock.requestCount()).isZero();
    }

    @Test
    void expectContinueOverTheCapIsAnsweredWithoutTheBody() throws Exception
    {
        byte[] small = chatBody(2);
        try (Socket socket = socket())
        {
            OutputStream out = socket.getOutputStream();
            out.write(head("Content-Length: " + (CAP + 1000), "Expect: 100-continue"));
            out.flush();
            RawResponse refused = RawResponse.read(socket.getInputStream());
            assertOpenAi413(refused, "request body is " + (CAP + 1000) + " bytes, over the limit of " + CAP + " bytes");
            // The client never sends that body; the connection serves the next request (or Jetty closed it, which a
            // client handles: it has nothing unsent).
            if (!"close".equalsIgnoreCase(refused.headers().get("connection")))
            {
                out.write(head("Content-Length: " + small.length));
                out.write(small);
                out.flush();
                assertThat(RawResponse.read(socket.getInputStream()).status()).isEqualTo(200);
            }
        }
    }

    @ParameterizedTest(name = "client {0}")
    @ValueSource(strings = {"HTTP/1.1", "HTTP/2.0"})
    void jettyClientGetsThe413InsteadOfAFailure(String clientVersion) throws Exception
    {
        HttpVersion version = HttpVersion.fromString(clientVersion);
        byte[] big = chatBody(CAP + 5_000);
        ContentResponse byLength = harness.http.newRequest(harness.url(CHAT)).method(HttpMethod.POST).version(version)
            .timeout(20, TimeUnit.SECONDS).body(new BytesRequestContent("application/json", big)).send();
        assertThat(byLength.getStatus()).isEqualTo(413);
        assertThat(byLength.getContentAsString()).contains("over the limit of " + CAP + " bytes");

        AsyncRequestContent chunked = new AsyncRequestContent("application/json");
        chunked.write(ByteBuffer.wrap(big), Callback.NOOP);
        chunked.close();
        ContentResponse streamed = harness.http.newRequest(harness.url(CHAT)).method(HttpMethod.POST).version(version)
            .timeout(20, TimeUnit.SECONDS).body(chunked).send();
        assertThat(streamed.getStatus()).isEqualTo(413);
        assertThat(streamed.getContentAsString()).contains("over the limit of " + CAP + " bytes");
        assertThat(mock.requestCount()).isZero();
    }

    private static Socket socket() throws IOException
    {
        Socket socket = new Socket("127.0.0.1", harness.gateway.port());
        socket.setSoTimeout(10_000);
        return socket;
    }

    private static void assertOpenAi413(RawResponse r, String message) throws IOException
    {
        assertThat(r.status()).as(r.body()).isEqualTo(413);
        assertThat(r.headers().get("content-type")).startsWith("application/json");
        assertThat(r.headers().get("x-request-id")).isNotBlank();
        JsonNode error = Json.MAPPER.readTree(r.body()).get("error");
        assertThat(error.get("message").asText()).isEqualTo(message);
        assertThat(error.get("type").asText()).isEqualTo("invalid_request_error");
    }
}
