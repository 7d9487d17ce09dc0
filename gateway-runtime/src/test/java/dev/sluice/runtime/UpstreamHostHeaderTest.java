package dev.sluice.runtime;

import dev.sluice.mock.MockProvider;
import dev.sluice.mock.RecordedRequest;
import org.eclipse.jetty.client.ContentResponse;
import org.eclipse.jetty.client.StringRequestContent;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpMethod;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.net.URI;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The provider gets one {@code Host} header naming its origin on every request: the first request of an upstream
 * (before its destination is known) and every later one, over HTTP/1.1; and none beside the {@code :authority} of an
 * h2c request. A {@code Host} header is never taken from the client.
 */
class UpstreamHostHeaderTest
{
    private static final String CHAT = "{\"model\":\"gpt-4o\",\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]}";

    @TempDir
    Path dir;

    private MockProvider mock;
    private GatewayHarness harness;

    @AfterEach
    void stop() throws Exception
    {
        if (harness != null)
            harness.close();
        if (mock != null)
            mock.close();
    }

    @ParameterizedTest
    @ValueSource(strings = {"http/1.1", "h2c"})
    @Timeout(60)
    void everyRequestNamesTheProvidersOriginOnce(String version) throws Exception
    {
        mock = MockProvider.builder().start();
        harness = GatewayHarness.start(dir, """
            listen: { host: 127.0.0.1, port: 0 }
            bindings:
              north: { type: openai, kind: server, exit: south }
              south:
                type: openai
                kind: client
                options: { url: "%s/v1", http: { version: %s } }
            """.formatted(mock.baseUrl(), version));
        URI base = URI.create(mock.baseUrl());
        String authority = base.getHost() + ":" + base.getPort();

        for (int i = 0; i < 5; i++)
        {
            // The client names the gateway, and another host on the last request: neither reaches the provider.
            boolean last = i == 4;
            ContentResponse r = harness.http.newRequest(harness.url("/v1/chat/completions"))
                .method(HttpMethod.POST).timeout(10, TimeUnit.SECONDS)
                .headers(h ->
                {
                    if (last)
                        h.put(HttpHeader.HOST, "client.example");
                })
                .body(new StringRequestContent("application/json", CHAT)).send();
            assertThat(r.getStatus()).as(r.getContentAsString()).isEqualTo(200);
        }

        List<RecordedRequest> sent = mock.requests();
        assertThat(sent).hasSize(5);
        for (int i = 0; i < sent.size(); i++)
        {
            RecordedRequest request = sent.get(i);
            List<String> hosts = request.headers().stream()
                .filter(h -> h.name().equalsIgnoreCase("host"))
                .map(RecordedRequest.Header::value)
                .toList();
            if ("h2c".equals(version))
                assertThat(request.httpVersion()).isEqualTo("HTTP/2.0");
            else
                assertThat(hosts).as("request %s", i + 1).containsExactly(authority);
            // Over h2c the origin travels as :authority; a Host header, if the server shows one, is that and only one.
            assertThat(hosts).hasSizeLessThanOrEqualTo(1).allMatch(authority::equals);
        }
    }
}
