package dev.sluice.runtime;

import com.fasterxml.jackson.databind.JsonNode;
import dev.sluice.mock.MockProvider;
import org.eclipse.jetty.client.ContentResponse;
import org.eclipse.jetty.client.StringRequestContent;
import org.eclipse.jetty.http.HttpMethod;
import org.eclipse.jetty.http.HttpVersion;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The admin listener (docs/configuration.md, "Admin listener") with a third-party plugin's endpoint on it: the
 * exchange-tap example's {@code GET /exchange-tap/recent}. Off by default, on its own port, behind {@code admin.token}
 * when one is set, and the only place the per-stage table and plugin endpoints are served. Plugin tasks on the shared
 * scheduler run.
 */
class AdminListenerTest
{
    private static final String TAP = "/exchange-tap/recent";

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

    private void start(String admin, String tapOptions) throws Exception
    {
        mock = MockProvider.builder().start();
        String yaml = CompletionHookTest.config(mock.baseUrl(), "http/1.1", tapOptions).replace("admin: { port: 0 }\n", admin);
        harness = GatewayHarness.start(dir, yaml, TapGateway.plugins(dir), Map.of("MOCK_KEY", "k", "ADMIN_TOKEN", "s3cret-admin"));
    }

    private ContentResponse get(String url, String authorization) throws Exception
    {
        var request = harness.http.newRequest(url).timeout(10, TimeUnit.SECONDS);
        if (authorization != null)
            request.headers(h -> h.put("Authorization", authorization));
        return request.send();
    }

    private ContentResponse chat() throws Exception
    {
        return harness.http.newRequest(harness.url("/v1/chat/completions")).method(HttpMethod.POST).version(HttpVersion.HTTP_1_1)
            .timeout(20, TimeUnit.SECONDS).body(new StringRequestContent("application/json", CompletionHookTest.body("gpt-4o", false)))
            .send();
    }

    @Test
    void isOffByDefaultAndNothingOfItIsOnThePublicPort() throws Exception
    {
        start("", "{}");

        assertThat(harness.gateway.adminPort()).isEqualTo(-1);
        assertThat(get(harness.url(TAP), null).getStatus()).isEqualTo(404);
        assertThat(get(harness.url("/_sluice/stages"), null).getStatus()).isEqualTo(404);
        // The gateway serves on without it.
        assertThat(chat().getStatus()).isEqualTo(200);
    }

    @Test
    void servesThePluginsRouteOnItsOwnPortOnly() throws Exception
    {
        start("admin: { port: 0, stages: true }\n", "{}");
        assertThat(chat().getStatus()).isEqualTo(200);

        assertThat(harness.gateway.adminPort()).isPositive().isNotEqualTo(harness.gateway.port());
        JsonNode tap = TapGateway.awaitSeen(harness.http, harness.adminUrl(TAP), 1);
        assertThat(tap.get("binding").asText()).isEqualTo("tap");
        assertThat(tap.get("recent")).hasSize(1);
        assertThat(get(harness.adminUrl("/healthz"), null).getStatus()).isEqualTo(200);
        assertThat(get(harness.adminUrl("/_sluice/stages"), null).getContentAsString()).startsWith("{\"count\":");
        ContentResponse onPublic = get(harness.url(TAP), null);
        assertThat(onPublic.getStatus()).isEqualTo(404);
        assertThat(onPublic.getContentAsString()).contains("no endpoint");
        assertThat(get(harness.url("/_sluice/stages"), null).getStatus()).isEqualTo(404);
    }

    @Test
    void answersUnknownPathsWith404AndWrongMethodsWith405() throws Exception
    {
        start("admin: { port: 0 }\n", "{}");

        ContentResponse unknown = get(harness.adminUrl("/exchange-tap/nothing"), null);
        assertThat(unknown.getStatus()).isEqualTo(404);
        assertThat(unknown.getHeaders().get("content-type")).startsWith("application/json");
        ContentResponse post = harness.http.newRequest(harness.adminUrl(TAP)).method(HttpMethod.POST).timeout(10, TimeUnit.SECONDS)
            .body(new StringRequestContent("application/json", "{}")).send();
        assertThat(post.getStatus()).isEqualTo(405);
        assertThat(get(harness.adminUrl("/_sluice/stages"), null).getStatus()).as("stages: off").isEqualTo(404);
        assertThat(get(harness.adminUrl("/v1/chat/completions"), null).getStatus()).as("no chat on the admin port").isEqualTo(404);
        assertThat(get(harness.adminUrl(TAP + "?limit=many"), null).getStatus()).as("the plugin's own 400").isEqualTo(400);
    }

    @Test
    void enforcesTheTokenOnEveryAdminRequest() throws Exception
    {
        start("admin: { port: 0, stages: true, token: \"${{env.ADMIN_TOKEN}}\" }\n", "{}");
        assertThat(chat().getStatus()).as("the public port takes no admin token").isEqualTo(200);

        for (String path : new String[]{TAP, "/healthz", "/_sluice/stages", "/unknown"})
        {
            ContentResponse none = get(harness.adminUrl(path), null);
            assertThat(none.getStatus()).as(path + " without a token").isEqualTo(401);
            assertThat(none.getHeaders().get("www-authenticate")).isEqualTo("Bearer");
            assertThat(none.getContentAsString()).doesNotContain("s3cret-admin");
            assertThat(get(harness.adminUrl(path), "Bearer s3cret-admim").getStatus()).as(path + " wrong token").isEqualTo(401);
            assertThat(get(harness.adminUrl(path), "Bearer s3cret-admin-and-more").getStatus()).as(path + " longer token").isEqualTo(401);
            assertThat(get(harness.adminUrl(path), "Basic czNjcmV0LWFkbWlu").getStatus()).as(path + " basic").isEqualTo(401);
        }
        assertThat(get(harness.adminUrl(TAP), "Bearer s3cret-admin").getStatus()).isEqualTo(200);
        assertThat(get(harness.adminUrl("/healthz"), "Bearer s3cret-admin").getStatus()).isEqualTo(200);
        assertThat(get(harness.adminUrl("/unknown"), "Bearer s3cret-admin").getStatus()).isEqualTo(404);
    }

    @Test
    void aPluginsPeriodicTaskRunsOnTheSharedScheduler() throws Exception
    {
        // Scheduled while the binding is created, before the gateway starts: it must run once the gateway runs.
        start("admin: { port: 0 }\n", "{ summary_every: 20ms }");

        JsonNode tap = TapGateway.await(harness.http, harness.adminUrl(TAP), t -> t.get("summaries").asLong() >= 2);

        assertThat(tap.get("summaries").asLong()).isGreaterThanOrEqualTo(2);
    }
}
