package dev.sluice.runtime;

import com.fasterxml.jackson.databind.JsonNode;
import dev.sluice.support.json.Json;
import dev.sluice.mock.MockModels;
import dev.sluice.mock.MockProvider;
import org.eclipse.jetty.client.ContentResponse;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What a route learns of its targets across requests, end to end: the retry budget caps the retries a failing target
 * causes, and the client gets the failure of those it refuses; a target that fails again and again is ejected, gets
 * no request during its cool-down, is probed by exactly one request after it, and is restored when the probe succeeds
 * or ejected again, for longer, when it fails. {@code GET /routes} on the admin listener shows it. Waits are lower
 * bounds only: a test sleeps at least as long as a cool-down, never asserts how fast something happened.
 */
class FailoverHealthTest
{
    private static final long SECOND = TimeUnit.SECONDS.toNanos(1);

    @TempDir
    Path dir;

    private final List<AutoCloseable> started = new ArrayList<>();
    private GatewayHarness gateway;

    @AfterEach
    void stop() throws Exception
    {
        SdkClients.stop(null, gateway);
        for (AutoCloseable c : started)
            c.close();
    }

    private MockProvider mock(MockProvider.Builder builder)
    {
        MockProvider mock = builder.start();
        started.add(mock);
        return mock;
    }

    /** Starts a gateway whose route {@code route} has {@code primaryUrl} first and {@code fallbackUrl} after it. */
    private void start(String routerOptions, String route, String primaryUrl, String fallbackUrl) throws Exception
    {
        gateway = GatewayHarness.start(dir, """
            listen: { host: 127.0.0.1, port: 0 }
            admin: { host: 127.0.0.1, port: 0 }
            bindings:
              north: { type: openai, kind: server, exit: router }
              router:
                type: router
                kind: proxy
                options: %s
                routes:
            %s
              primary: { type: openai, kind: client, options: { url: "%s", http: { version: http/1.1 } } }
              fallback: { type: openai, kind: client, options: { url: "%s", http: { version: http/1.1 } } }
            """.formatted(routerOptions, route.stripTrailing(), primaryUrl, fallbackUrl));
    }

    /** @return the state {@code GET /routes} shows of target {@code exit} of the first route */
    private JsonNode targetState(String exit) throws Exception
    {
        ContentResponse r = gateway.http.newRequest(gateway.adminUrl("/routes")).timeout(10, TimeUnit.SECONDS).send();
        assertThat(r.getStatus()).as(r.getContentAsString()).isEqualTo(200);
        for (JsonNode target : Json.MAPPER.readTree(r.getContentAsString()).path("routes").path(0).path("targets"))
        {
            if (target.path("exit").asText().equals(exit))
                return target;
        }
        throw new AssertionError("no target " + exit + " in " + r.getContentAsString());
    }

    private ChatAnswer ask() throws Exception
    {
        return ChatAnswer.openAi(gateway, "gpt-4o", false);
    }

    private static void assertAnsweredBy(ChatAnswer answer, String target, int attempts)
    {
        assertThat(answer.status()).as(answer.toString()).isEqualTo(200);
        assertThat(answer.target()).as(answer.toString()).isEqualTo(target);
        assertThat(answer.attempts()).as(answer.toString()).isEqualTo(Integer.toString(attempts));
    }

    private static void sleepUntil(long nanoTime) throws InterruptedException
    {
        long left = nanoTime - System.nanoTime();
        if (left > 0)
            TimeUnit.NANOSECONDS.sleep(left);
    }

    @Test
    void theRetryBudgetCapsTheRetriesOfATargetThatFailsEveryRequestAndTheRefusedGetItsError() throws Exception
    {
        MockProvider primary = mock(MockProvider.builder());
        MockProvider fallback = mock(MockProvider.builder());
        start("{ attempt_headers: true, retry_budget: { ratio: 0.2, min_per_second: 1 } }", """
                  - when: [ { model: "gpt-*" } ]
                    targets:
                      - { exit: primary, with: { model: "%s" } }
                      - { exit: fallback, priority: 1 }
                    eject: { consecutive: 1000 }
            """.formatted(MockModels.ERROR_500), primary.baseUrl(), fallback.baseUrl());

        int n = 100;
        int answered = 0;
        int refused = 0;
        long begin = System.nanoTime();
        for (int i = 0; i < n; i++)
        {
            ChatAnswer answer = ask();
            if (answer.status() == 200)
            {
                assertAnsweredBy(answer, "fallback", 2);
                answered++;
            }
            else
            {
                // No retry: the client gets the primary's failure, after its one attempt.
                assertThat(answer.status()).as(answer.toString()).isEqualTo(500);
                assertThat(answer.json().path("error").path("type").asText()).isEqualTo("server_error");
                assertThat(answer.target()).isEqualTo("primary");
                assertThat(answer.attempts()).isEqualTo("1");
                refused++;
            }
        }
        long seconds = (System.nanoTime() - begin) / SECOND;

        // Every request tried the primary (nothing was ejected), and each retry went to the fallback.
        assertThat(primary.requestCount()).isEqualTo(n);
        assertThat(fallback.requestCount()).isEqualTo(answered);
        // The budget: 0.2 retries per request plus 1 per second, over a window of 10 s; one more window of floor per
        // 10 s the run took on a slow machine.
        long windows = seconds / 10 + 1;
        assertThat(primary.requestCount() + fallback.requestCount()).as("upstream attempts")
            .isLessThanOrEqualTo((int)(n * 1.2 + 10 * windows));
        // The floor lets the first ten through whatever the ratio; past it, retries were refused.
        assertThat(answered).isGreaterThanOrEqualTo(10);
        assertThat(refused).isEqualTo(n - answered).isPositive();
        assertThat(targetState("primary").path("retries_refused").asInt()).isEqualTo(refused);
        assertThat(targetState("primary").path("state").asText()).isEqualTo("healthy");
    }

    @Test
    void anEjectedTargetGetsNoRequestDuringItsCoolDownThenOneProbeWhoseSuccessRestoresIt() throws Exception
    {
        int port = FailoverTest.deadPort();
        MockProvider fallback = mock(MockProvider.builder());
        start("{ attempt_headers: true }", """
                  - when: [ { model: "gpt-*" } ]
                    targets:
                      - { exit: primary }
                      - { exit: fallback, priority: 1 }
                    eject: { consecutive: 3, base: 2s }
            """, "http://127.0.0.1:" + port + "/v1", fallback.baseUrl());

        // Three refused connections in a row: ejected.
        long thirdSent = 0;
        for (int i = 0; i < 3; i++)
        {
            thirdSent = System.nanoTime();
            assertAnsweredBy(ask(), "fallback", 2);
        }
        long ejectedBy = System.nanoTime();
        JsonNode ejected = targetState("primary");
        assertThat(ejected.path("state").asText()).as(ejected.toString()).isEqualTo("ejected");
        assertThat(ejected.path("ejections").asInt()).isEqualTo(1);

        // The primary comes back, slow enough that the probe is still out while other requests are picked.
        MockProvider primary = mock(MockProvider.builder().port(port).delay(Duration.ofMillis(500)));
        List<ChatAnswer> duringCoolDown = new ArrayList<>();
        for (int i = 0; i < 3; i++)
            duringCoolDown.add(ask());
        // The cool-down began after the third request was sent: what was answered before that plus 2 s was inside it.
        Assumptions.assumeTrue(System.nanoTime() - thirdSent < 2 * SECOND,
            "the machine was too slow to stay inside the cool-down");
        for (ChatAnswer answer : duringCoolDown)
            assertAnsweredBy(answer, "fallback", 1);
        assertThat(primary.requestCount()).as("requests at the ejected primary").isZero();

        // Past the cool-down: of four requests at once, exactly one is the probe.
        sleepUntil(ejectedBy + 2 * SECOND);
        List<CompletableFuture<ChatAnswer>> sent = new ArrayList<>();
        for (int i = 0; i < 4; i++)
            sent.add(ChatAnswer.send(gateway.http, gateway.url("/v1/chat/completions"), ChatAnswer.openAiBody("gpt-4o", false)));
        List<String> targets = new ArrayList<>();
        for (CompletableFuture<ChatAnswer> f : sent)
        {
            ChatAnswer answer = f.get(30, TimeUnit.SECONDS);
            assertThat(answer.status()).as(answer.toString()).isEqualTo(200);
            assertThat(answer.attempts()).isEqualTo("1");
            targets.add(answer.target());
        }
        assertThat(targets).containsExactlyInAnyOrder("primary", "fallback", "fallback", "fallback");
        assertThat(primary.requestCount()).as("probes").isEqualTo(1);

        // The probe succeeded: restored, the primary takes the next request.
        assertThat(targetState("primary").path("state").asText()).isEqualTo("healthy");
        assertAnsweredBy(ask(), "primary", 1);
        assertThat(primary.requestCount()).isEqualTo(2);
    }

    @Test
    void aFailedProbeEjectsTheTargetAgainForLonger() throws Exception
    {
        MockProvider fallback = mock(MockProvider.builder());
        start("{ attempt_headers: true }", """
                  - when: [ { model: "gpt-*" } ]
                    targets:
                      - { exit: primary }
                      - { exit: fallback, priority: 1 }
                    eject: { consecutive: 3, base: 2s, max: 1m }
            """, "http://127.0.0.1:" + FailoverTest.heldDeadPort() + "/v1", fallback.baseUrl());

        for (int i = 0; i < 3; i++)
            assertAnsweredBy(ask(), "fallback", 2);
        long ejectedBy = System.nanoTime();
        assertThat(targetState("primary").path("state").asText()).isEqualTo("ejected");
        assertAnsweredBy(ask(), "fallback", 1);

        // Past the cool-down the probe goes to the primary, is refused, and the request moves on.
        sleepUntil(ejectedBy + 2 * SECOND);
        ChatAnswer probe = ask();
        long probeAnswered = System.nanoTime();
        assertAnsweredBy(probe, "fallback", 2);

        long asked = System.nanoTime();
        JsonNode again = targetState("primary");
        assertThat(again.path("state").asText()).as(again.toString()).isEqualTo("ejected");
        assertThat(again.path("ejections").asInt()).isEqualTo(2);
        // The new cool-down began before the probe's answer came: its length is at least what is left of it plus
        // the time since then, and that is more than the first one's 2 s.
        long lengthAtLeastMs = again.path("available_in_ms").asLong() + TimeUnit.NANOSECONDS.toMillis(asked - probeAnswered);
        assertThat(lengthAtLeastMs).as("the second cool-down, in ms").isGreaterThan(2_000);
        assertAnsweredBy(ask(), "fallback", 1);
        assertAnsweredBy(ask(), "fallback", 1);
    }
}
