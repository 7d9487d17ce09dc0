package dev.sluice.runtime;

import dev.sluice.api.config.ConfigException;
import dev.sluice.mock.MockModels;
import dev.sluice.mock.MockProvider;
import org.eclipse.jetty.client.CompletableResponseListener;
import org.eclipse.jetty.client.ContentResponse;
import org.eclipse.jetty.client.StringRequestContent;
import org.eclipse.jetty.http.HttpMethod;
import org.eclipse.jetty.http.HttpVersion;
import org.eclipse.jetty.logging.JettyLogger;
import org.eclipse.jetty.logging.StdErrAppender;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.slf4j.LoggerFactory;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Bindings' lifecycle (SPI 0.3.0) seen from a third-party plugin: the exchange-tap example appends a line to its
 * {@code close_file} on each {@code close()} and logs one line, and has no side effect under {@code sluice check}. The
 * runtime must close every binding exactly once — at stop after the drain (a binding before its exit), after a failed
 * start, and after {@code Sluice.check} — and tell the bindings under check that they are.
 */
class BindingLifecycleTest
{
    private static final String TAP_LOGGER = "dev.sluice.examples.exchangetap.ExchangeTapBinding";

    @TempDir
    Path dir;

    private MockProvider mock;

    @AfterEach
    void stop()
    {
        if (mock != null)
            mock.close();
    }

    /** Two taps in a row (tap_a before tap_b), each writing its close line to {@code closeFile}. */
    private String twoTaps(Path closeFile, String extra)
    {
        String file = closeFile.toString().replace("\\", "/");
        return CompletionHookTest.config(mock.baseUrl(), "http/1.1",
                "{ close_file: \"" + file + "\", summary_every: 1h, admin_path: /tap-a }")
            .replace("exit: tap }", "exit: tap_a }")
            .replace("  tap: { type: exchange-tap, kind: proxy,", extra
                + "  tap_b: { type: exchange-tap, kind: proxy, options: { close_file: \"" + file + "\", admin_path: /tap-b }, exit: router }\n"
                + "  tap_a: { type: exchange-tap, kind: proxy,")
            .replace("exit: router }\n  router:", "exit: tap_b }\n  router:");
    }

    @Test
    void everyBindingIsClosedOnceAtStopAfterTheDrainABindingBeforeItsExit() throws Exception
    {
        mock = MockProvider.builder().start();
        Path closed = dir.resolve("closed.txt");
        GatewayHarness harness = GatewayHarness.start(dir, twoTaps(closed, ""), TapGateway.plugins(dir), Map.of("MOCK_KEY", "k"));
        assertThat(harness.http.newRequest(harness.url("/v1/chat/completions")).method(HttpMethod.POST).timeout(20, TimeUnit.SECONDS)
            .body(new StringRequestContent("application/json", CompletionHookTest.body("gpt-4o", false))).send().getStatus())
            .isEqualTo(200);
        TapGateway.await(harness.http, harness.adminUrl("/tap-b"), t -> t.get("seen").asLong() == 1 && t.get("in_flight").asLong() == 0);
        assertThat(closed).doesNotExist();

        harness.close();
        harness.gateway.close();

        List<String> lines = Files.readAllLines(closed);
        assertThat(lines).hasSize(2);
        assertThat(lines.get(0)).startsWith("closed binding=tap_a seen=1 entered=1 in_flight=0 ");
        assertThat(lines.get(1)).startsWith("closed binding=tap_b seen=1 entered=1 in_flight=0 ");
    }

    @Test
    void closeComesAfterAnInFlightStreamDrainedAndCompleted() throws Exception
    {
        mock = MockProvider.builder().streamProfile(Duration.ZERO, Duration.ofMillis(40), 15).start();
        Path closed = dir.resolve("closed.txt");
        GatewayHarness harness = GatewayHarness.start(dir, twoTaps(closed, ""), TapGateway.plugins(dir), Map.of("MOCK_KEY", "k"));
        CompletableFuture<ContentResponse> response = new CompletableResponseListener(harness.http.newRequest(
            harness.url("/v1/chat/completions")).method(HttpMethod.POST).timeout(20, TimeUnit.SECONDS)
            .body(new StringRequestContent("application/json", CompletionHookTest.body("gpt-4o", true))), 1 << 20).send();
        assertThat(mock.awaitRequests(1, Duration.ofSeconds(10))).isTrue();

        harness.gateway.close();

        assertThat(response.get(20, TimeUnit.SECONDS).getContentAsString()).endsWith("data: [DONE]\n\n");
        harness.http.stop();
        assertThat(Files.readAllLines(closed)).hasSize(2)
            .allMatch(l -> l.contains(" seen=1 entered=1 in_flight=0 "), "the stream completed before close()");
    }

    @ParameterizedTest(name = "client {0}")
    @ValueSource(strings = {"HTTP/1.1", "HTTP/2.0"})
    void anExchangeCutAtTheEndOfTheGraceCompletesBeforeClose(String clientVersion) throws Exception
    {
        mock = MockProvider.builder().start();
        Path closed = dir.resolve("closed.txt");
        GatewayHarness harness = GatewayHarness.start(dir, "shutdown: { grace: 200ms }\n" + twoTaps(closed, ""),
            TapGateway.plugins(dir), Map.of("MOCK_KEY", "k"));
        harness.http.newRequest(harness.url("/v1/chat/completions")).method(HttpMethod.POST)
            .version(HttpVersion.fromString(clientVersion)).timeout(20, TimeUnit.SECONDS)
            .body(new StringRequestContent("application/json", CompletionHookTest.body(MockModels.HANG, false))).send(result -> { });
        assertThat(mock.awaitRequests(1, Duration.ofSeconds(10))).isTrue();

        // The provider never answers: the grace ends, the connection is closed, the exchange must still complete once.
        // An ended grace is how a stop goes, not a failure of it: close() does not throw.
        harness.gateway.close();
        harness.http.stop();

        assertThat(Files.readAllLines(closed)).hasSize(2)
            .allMatch(l -> l.contains(" seen=1 entered=1 in_flight=0 "), "the cut exchange completed before close()");
    }

    @Test
    void bindingsCreatedBeforeAFailedStartAreClosedOnce() throws Exception
    {
        mock = MockProvider.builder().start();
        Path closed = dir.resolve("closed.txt");
        // A second server on the first one's endpoint fails the start after the taps were created.
        String yaml = twoTaps(closed, "  north_again: { type: openai, kind: server, exit: router }\n");
        Path file = Files.writeString(dir.resolve("clash.yaml"), yaml);

        assertThatThrownBy(() -> Sluice.start(Sluice.options(file, TapGateway.plugins(dir)).port(0).adminPort(0)
            .env(Map.of("MOCK_KEY", "k")::get)))
            .isInstanceOf(ConfigException.class).hasMessageContaining("already served");

        assertThat(Files.readAllLines(closed)).hasSize(2).allMatch(l -> l.startsWith("closed binding=tap_"));
    }

    @Test
    void checkReportsTwoBindingsOnOneAdminPathAsTheStartWould() throws Exception
    {
        mock = MockProvider.builder().start();
        Path closed = dir.resolve("closed.txt");
        Path file = Files.writeString(dir.resolve("clash.yaml"), twoTaps(closed, "").replace("admin_path: /tap-b", "admin_path: /tap-a"));
        Path plugins = TapGateway.plugins(dir);

        assertThatThrownBy(() -> Sluice.check(Sluice.options(file, plugins).env(Map.of("MOCK_KEY", "k")::get)))
            .isInstanceOf(ConfigException.class).hasMessageContaining("admin endpoint GET /tap-a is already served by bindings.tap_b");
        assertThatThrownBy(() -> Sluice.start(Sluice.options(file, plugins).port(0).adminPort(0).env(Map.of("MOCK_KEY", "k")::get)))
            .isInstanceOf(ConfigException.class).hasMessageContaining("admin endpoint GET /tap-a is already served by bindings.tap_b");
        // Check wrote nothing; the start closed the tap it had created (tap_b, the exit) and tap_a, refused by the
        // runtime while it registered, had scheduled nothing yet (it registers its admin path first).
        assertThat(Files.readAllLines(closed)).singleElement().asString().startsWith("closed binding=tap_b ");
    }

    @Test
    void checkClosesEveryBindingOnceAndTellsItSoItHasNoSideEffects() throws Exception
    {
        mock = MockProvider.builder().start();
        Path closed = dir.resolve("closed.txt");
        Path file = Files.writeString(dir.resolve("gateway.yaml"), twoTaps(closed, ""));
        String log;
        StdErrAppender appender = (StdErrAppender)((JettyLogger)LoggerFactory.getLogger(TAP_LOGGER)).getAppender();
        PrintStream original = appender.getStream();
        ByteArrayOutputStream captured = new ByteArrayOutputStream();
        appender.setStream(new PrintStream(captured, true, StandardCharsets.UTF_8));
        try
        {
            assertThat(Sluice.check(Sluice.options(file, TapGateway.plugins(dir)).env(Map.of("MOCK_KEY", "k")::get)))
                .contains("tap_a", "tap_b");
        }
        finally
        {
            appender.setStream(original);
            log = captured.toString(StandardCharsets.UTF_8);
        }

        assertThat(closed).as("no file under check").doesNotExist();
        List<String> closes = log.lines().filter(l -> l.contains(": closed")).toList();
        assertThat(closes).hasSize(2);
        assertThat(closes.get(0)).contains("exchange-tap tap_a: closed (check only); 0 exchanges seen", "summary task never scheduled");
        assertThat(closes.get(1)).contains("exchange-tap tap_b: closed (check only)");
    }
}
