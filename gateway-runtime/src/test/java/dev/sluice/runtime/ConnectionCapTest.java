package dev.sluice.runtime;

import dev.sluice.bench.mock.MockProvider;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code listen.max_connections}: past the cap the gateway accepts no more client connections until one closes;
 * the clients over it wait (in the listen queue) and are served then, the ones it holds are served as before, and the
 * admin listener stays reachable.
 */
class ConnectionCapTest
{
    private static final String REQUEST_BODY = "{\"model\":\"gpt-4o-mini\",\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]}";

    @TempDir
    Path dir;

    private MockProvider mock;
    private GatewayHarness harness;
    private final List<Socket> sockets = new ArrayList<>();

    @AfterEach
    void stop() throws Exception
    {
        for (Socket s : sockets)
            s.close();
        if (harness != null)
            harness.close();
        if (mock != null)
            mock.close();
    }

    private void start(String listen) throws Exception
    {
        mock = MockProvider.builder().start();
        harness = GatewayHarness.start(dir, """
            listen: { host: 127.0.0.1, port: 0, %s }
            admin: { port: 0 }
            bindings:
              north: { type: openai, kind: server, exit: south }
              south:
                type: openai
                kind: client
                options: { url: "%s", http: { version: http/1.1 } }
            """.formatted(listen, mock.baseUrl()));
    }

    private Socket connect() throws IOException
    {
        Socket s = new Socket("127.0.0.1", harness.gateway.port());
        sockets.add(s);
        return s;
    }

    private static void send(Socket s) throws IOException
    {
        byte[] body = REQUEST_BODY.getBytes(StandardCharsets.UTF_8);
        s.getOutputStream().write(("POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            + "Content-Length: " + body.length + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
        s.getOutputStream().write(body);
        s.getOutputStream().flush();
    }

    /** @return the status line and headers of one answer, or {@code null} if nothing came within {@code wait} */
    private static String head(Socket s, Duration wait) throws IOException
    {
        s.setSoTimeout((int) wait.toMillis());
        InputStream in = s.getInputStream();
        ByteArrayOutputStream head = new ByteArrayOutputStream();
        try
        {
            while (true)
            {
                int b = in.read();
                if (b < 0)
                    return head.size() == 0 ? null : head.toString(StandardCharsets.US_ASCII);
                head.write(b);
                String text = head.toString(StandardCharsets.US_ASCII);
                if (text.endsWith("\r\n\r\n"))
                {
                    int length = contentLength(text);
                    in.readNBytes(length);
                    return text;
                }
            }
        }
        catch (SocketTimeoutException e)
        {
            return head.size() == 0 ? null : head.toString(StandardCharsets.US_ASCII);
        }
    }

    private static int contentLength(String head)
    {
        for (String line : head.split("\r\n"))
        {
            if (line.regionMatches(true, 0, "content-length:", 0, 15))
                return Integer.parseInt(line.substring(15).trim());
        }
        return 0;
    }

    @Test
    @Timeout(60)
    void pastTheCapAClientWaitsUntilAConnectionClosesAndTheAdminListenerStillAnswers() throws Exception
    {
        start("max_connections: 2");
        Socket first = connect();
        Socket second = connect();
        send(first);
        send(second);
        assertThat(head(first, Duration.ofSeconds(10))).startsWith("HTTP/1.1 200");
        assertThat(head(second, Duration.ofSeconds(10))).startsWith("HTTP/1.1 200");

        // The kernel completes the third handshake (the listen queue), but the gateway does not take the connection:
        // its request gets no answer while the other two are kept alive and still served.
        Socket third = connect();
        send(third);
        assertThat(head(third, Duration.ofMillis(700))).as("an answer past the cap").isNull();
        send(first);
        assertThat(head(first, Duration.ofSeconds(10))).startsWith("HTTP/1.1 200");

        HttpClient jdk = HttpClient.newHttpClient();
        HttpResponse<String> health = jdk.send(HttpRequest.newBuilder(URI.create(harness.adminUrl("/healthz")))
            .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(health.statusCode()).as("the admin listener at the cap").isEqualTo(200);

        // One closes: the waiting client is accepted and its request (sent long ago) answered; nothing was lost.
        second.close();
        assertThat(head(third, Duration.ofSeconds(10))).startsWith("HTTP/1.1 200");
        assertThat(harness.gateway.connectionCapReached()).isGreaterThanOrEqualTo(1);
        assertThat(mock.requestCount()).isEqualTo(4);
    }

    @Test
    @Timeout(60)
    void withoutACapEveryConnectionIsTaken() throws Exception
    {
        start("max_connections: 0");
        List<Socket> many = new ArrayList<>();
        for (int i = 0; i < 50; i++)
            many.add(connect());
        for (Socket s : many)
            send(s);
        for (Socket s : many)
            assertThat(head(s, Duration.ofSeconds(10))).startsWith("HTTP/1.1 200");
        assertThat(harness.gateway.connectionCapReached()).isZero();
    }
}
