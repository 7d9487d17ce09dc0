package dev.sluice.runtime;

import com.fasterxml.jackson.databind.JsonNode;
import dev.sluice.mock.MockProvider;
import dev.sluice.support.json.Json;
import dev.sluice.support.upstream.TokenCountReplies;
import org.eclipse.jetty.client.ContentResponse;
import org.eclipse.jetty.client.StringRequestContent;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Token counts through a chain of every policy plugin — log, metrics, limits, guard (with response rules), cache —
 * in front of a provider that counts (Gemini) and one that does not (OpenAI): a count costs a request of the rate but
 * no tokens, is neither served from nor stored in the cache (its request decodes like the chat request it counts),
 * passes response rules that would refuse an answer they cannot read, and is logged like any exchange.
 */
class TokenCountPoliciesTest
{
    private static final String CONTENTS = "{\"contents\":[{\"role\":\"user\",\"parts\":[{\"text\":\"Count these words"
        + " for me, please\"}]}]}";

    @TempDir
    static Path dir;

    private static MockProvider mock;
    private static GatewayHarness gateway;
    private static Path log;

    private static String config(String mockRoot, Path log)
    {
        String http = "{ version: http/1.1, first_byte_timeout: 15s, idle_timeout: 15s }";
        return """
            listen: { host: 127.0.0.1, port: 0 }
            bindings:
              north_anthropic: { type: anthropic, kind: server, exit: log }
              north_gemini: { type: gemini, kind: server, exit: log }
              log: { type: log, kind: proxy, exit: metrics, options: { path: "%3$s", flush_interval: 100ms } }
              metrics: { type: metrics, kind: proxy, exit: limits, options: { jvm: false } }
              limits:
                type: limits
                kind: proxy
                exit: guard
                options:
                  anonymous: { rpm: 1000, tpm: 200, budget: { amount: 0.000001, period: 1d } }
                  prices: { "*": { input: 1000, output: 1000 } }
              guard:
                type: guard
                kind: proxy
                exit: cache
                options:
                  request: [ { rule: card, action: block } ]
                  response: [ { rule: email, action: block } ]
              cache: { type: cache, kind: proxy, exit: router }
              router:
                type: router
                kind: proxy
                routes:
                  - when: [ { model: "gpt-*" } ]
                    exit: south_openai
                  - when: [ { model: "gemini-*" } ]
                    exit: south_gemini
              south_openai:
                type: openai
                kind: client
                options: { url: "%1$s/v1", api_key: "${{env.OPENAI_KEY}}", http: %2$s }
              south_gemini:
                type: gemini
                kind: client
                options: { url: "%1$s/v1beta", api_key: "${{env.GEMINI_KEY}}", http: %2$s }
            """.formatted(mockRoot, http, log);
    }

    @BeforeAll
    static void start() throws Exception
    {
        mock = MockProvider.builder().start();
        log = dir.resolve("requests.jsonl");
        gateway = GatewayHarness.start(dir, config(mock.rootUrl(), log), TestDist.plugins(),
            Map.of("OPENAI_KEY", "sk-upstream-openai", "GEMINI_KEY", "upstream-gemini-key"));
    }

    @AfterAll
    static void stop() throws Exception
    {
        SdkClients.stop(mock, gateway);
    }

    @BeforeEach
    void clearRecording()
    {
        mock.clearRecords();
    }

    private static ContentResponse post(String path, String body) throws Exception
    {
        return gateway.http.POST(gateway.url(path)).timeout(SdkClients.TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)
            .headers(h -> h.put("x-goog-api-key", "client-gemini-key"))
            .body(new StringRequestContent("application/json", body)).send();
    }

    private static JsonNode json(ContentResponse response) throws Exception
    {
        return Json.MAPPER.readTree(response.getContentAsString());
    }

    @Test
    void aCountIsNeitherCachedNorServedACachedChatAnswer() throws Exception
    {
        for (int i = 0; i < 2; i++)
        {
            ContentResponse count = post("/v1beta/models/gemini-2.5-flash:countTokens", CONTENTS);
            assertThat(count.getStatus()).as(count.getContentAsString()).isEqualTo(200);
            assertThat(json(count).has("totalTokens")).isTrue();
            assertThat(count.getHeaders().get("x-cache")).isNull();
        }
        // Both counts reached the provider: nothing was stored, nothing served.
        assertThat(mock.requests()).hasSize(2).allSatisfy(r -> assertThat(r.path()).endsWith(":countTokens"));
    }

    @Test
    void aCountUsesARequestOfTheRateButNoTokensNorBudget() throws Exception
    {
        // The same contents as a chat turn: its reserved tokens (input and the default max tokens) are over tpm and
        // its cost over the budget, so it is refused; the count of them is not.
        ContentResponse chat = post("/v1beta/models/gpt-4o:generateContent", CONTENTS);
        assertThat(chat.getStatus()).isEqualTo(429);
        ContentResponse count = post("/v1beta/models/gpt-4o:countTokens", CONTENTS);
        assertThat(count.getStatus()).as(count.getContentAsString()).isEqualTo(200);
        assertThat(count.getHeaders().get(TokenCountReplies.HEADER)).isEqualTo(TokenCountReplies.ESTIMATE);
        assertThat(json(count).get("totalTokens").asLong()).isPositive();
        assertThat(mock.requestCount()).isZero();
    }

    @Test
    void aCountPassesResponseRulesThatCannotReadIt() throws Exception
    {
        ContentResponse forwarded = post("/v1beta/models/gemini-2.5-flash:countTokens", CONTENTS);
        assertThat(forwarded.getStatus()).as(forwarded.getContentAsString()).isEqualTo(200);
        ContentResponse local = post("/v1beta/models/gpt-4o:countTokens", CONTENTS);
        assertThat(local.getStatus()).as(local.getContentAsString()).isEqualTo(200);
    }

    @Test
    void aCountsPromptIsCheckedByTheRequestRules() throws Exception
    {
        ContentResponse blocked = post("/v1beta/models/gemini-2.5-flash:countTokens", "{\"contents\":[{\"role\":\"user\","
            + "\"parts\":[{\"text\":\"my card is 4111 1111 1111 1111\"}]}]}");
        assertThat(blocked.getStatus()).isEqualTo(400);
        assertThat(json(blocked).at("/error/message").asText()).contains("card");
        assertThat(mock.requestCount()).isZero();
    }

    @Test
    void aCountIsLoggedWithoutUsage() throws Exception
    {
        ContentResponse counted = post("/v1beta/models/gemini-2.5-flash:countTokens", CONTENTS);
        assertThat(counted.getStatus()).isEqualTo(200);
        // This count's own line: the other tests' counts log to the same file.
        String id = counted.getHeaders().get("x-request-id");
        assertThat(id).isNotNull();
        JsonNode line = null;
        for (int i = 0; i < 200 && line == null; i++)
        {
            if (Files.exists(log))
            {
                List<String> lines = Files.readAllLines(log);
                for (String l : lines)
                {
                    JsonNode record = Json.MAPPER.readTree(l);
                    if (id.equals(record.path("id").asText()))
                        line = record;
                }
            }
            if (line == null)
                Thread.sleep(50);
        }
        assertThat(line).as("a log line for the count").isNotNull();
        assertThat(line.get("model").asText()).isEqualTo("gemini-2.5-flash");
        // A count generates nothing: no usage, logged as null tokens.
        assertThat(line.get("input_tokens").isNull()).as(line.toString()).isTrue();
        assertThat(line.get("output_tokens").isNull()).as(line.toString()).isTrue();
    }
}
