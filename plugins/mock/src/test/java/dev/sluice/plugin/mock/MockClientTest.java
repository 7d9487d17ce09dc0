package dev.sluice.plugin.mock;

import com.fasterxml.jackson.databind.JsonNode;
import dev.sluice.api.ErrorKind;
import dev.sluice.api.GatewayException;
import dev.sluice.api.binding.BindingConfig;
import dev.sluice.api.binding.BindingConfig.BindingKind;
import dev.sluice.api.binding.ClientBinding;
import dev.sluice.api.config.ConfigException;
import dev.sluice.api.exchange.EventStream;
import dev.sluice.api.exchange.Exchange;
import dev.sluice.api.exchange.Reply;
import dev.sluice.api.model.ChatRequest;
import dev.sluice.api.model.ChatResponse;
import dev.sluice.api.model.ContentPart;
import dev.sluice.api.model.Message;
import dev.sluice.api.model.Message.Role;
import dev.sluice.api.model.ChatResponse.StopReason;
import dev.sluice.api.model.StreamEvent;
import dev.sluice.api.model.StreamItem;
import dev.sluice.api.model.Usage;
import dev.sluice.api.testing.TestBindingContext;
import dev.sluice.api.testing.TestBindingContext.RecordedTask;
import dev.sluice.api.testing.TestExchange;
import dev.sluice.support.json.Json;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class MockClientTest
{
    private static final String BODY = "{\"model\":\"demo\",\"messages\":[{\"role\":\"user\",\"content\":\"Hi there\"}]}";

    private final MockClientFactory factory = new MockClientFactory();

    @Test
    void answersDefaultTextWithoutDecodingTheRequest()
    {
        ClientBinding mock = create("{}");
        TestExchange exchange = new TestExchange(request("demo", false, false, "Hi there"), BODY);
        exchange.targetModel("demo-target");

        ChatResponse response = message(mock.handle(exchange));

        assertThat(response.id()).isEqualTo("mock-1");
        assertThat(response.model()).isEqualTo("demo-target");
        assertThat(response.content()).containsExactly(new ContentPart.Text(MockOptions.DEFAULT_TEXT));
        assertThat(response.stopReason()).isEqualTo(StopReason.END_TURN);
        assertThat(response.usage().outputTokens()).isEqualTo(6);
        assertThat(response.usage().inputTokens()).isPositive();
        assertThat(response.created()).isPositive();
        assertThat(exchange.usage()).isEqualTo(response.usage());
        assertThat(exchange.decodes()).isZero();
        assertThat(exchange.modified()).isFalse();
    }

    @Test
    void numbersItsAnswers()
    {
        ClientBinding mock = create("{}");

        assertThat(message(mock.handle(new TestExchange(request("demo", false, false, "a"), BODY))).id()).isEqualTo("mock-1");
        assertThat(message(mock.handle(new TestExchange(request("demo", false, false, "a"), BODY))).id()).isEqualTo("mock-2");
    }

    @Test
    void answersConfiguredText()
    {
        ClientBinding mock = create("{\"text\":\"All good.\"}");

        ChatResponse response = message(mock.handle(new TestExchange(request("demo", false, false, "Hi"), BODY)));

        assertThat(response.content()).containsExactly(new ContentPart.Text("All good."));
        assertThat(response.usage().outputTokens()).isEqualTo(2);
    }

    @Test
    void echoesTheLastUserMessage()
    {
        ClientBinding mock = create("{\"echo\":true}");
        ChatRequest request = new ChatRequest("demo", List.of(new ContentPart.Text("Be brief.")),
            List.of(Message.text(Role.USER, "first"), Message.text(Role.ASSISTANT, "answer"),
                new Message(Role.USER, List.of(new ContentPart.Text("second"), new ContentPart.Text("part")), null),
                Message.text(Role.ASSISTANT, "trailing")),
            List.of(), null, null, null, null, false, false, null, null, null);
        TestExchange exchange = new TestExchange(request, BODY);

        ChatResponse response = message(mock.handle(exchange));

        assertThat(response.content()).containsExactly(new ContentPart.Text("You said: second\npart"));
        assertThat(exchange.decodes()).isPositive();
        assertThat(exchange.modified()).isFalse();
    }

    @Test
    void echoWithoutUserTextSaysSo()
    {
        ChatRequest request = new ChatRequest("demo", List.of(), List.of(Message.text(Role.ASSISTANT, "hello")),
            List.of(), null, null, null, null, false, false, null, null, null);

        assertThat(MockClient.echo(request)).isEqualTo("You said nothing.");
    }

    @Test
    void streamsWordsThenStopThenEnd()
    {
        ClientBinding mock = create("{\"text\":\"One  two three\"}");
        TestExchange exchange = new TestExchange(request("demo", true, false, "Hi"), BODY);

        List<StreamItem> items = drain(stream(mock.handle(exchange)));

        Usage usage = exchange.usage();
        assertThat(usage.outputTokens()).isEqualTo(3);
        assertThat(exchange.modified()).isFalse();
        assertThat(items).hasSize(8);
        assertThat(items.get(0)).isInstanceOfSatisfying(StreamEvent.MessageStart.class, start ->
        {
            assertThat(start.id()).isEqualTo("mock-1");
            assertThat(start.model()).isEqualTo("demo");
            assertThat(start.usage().inputTokens()).isEqualTo(usage.inputTokens());
        });
        assertThat(items.subList(1, 8)).containsExactly(
            new StreamEvent.TextStart(0),
            new StreamEvent.TextDelta(0, "One"),
            new StreamEvent.TextDelta(0, "  two"),
            new StreamEvent.TextDelta(0, " three"),
            new StreamEvent.BlockStop(0),
            new StreamEvent.Stop(StopReason.END_TURN, "stop", usage),
            StreamItem.END);
    }

    @Test
    void streamsUsageReportWhenAskedFor()
    {
        ClientBinding mock = create("{}");
        TestExchange exchange = new TestExchange(request("demo", true, true, "Hi"), BODY);

        List<StreamItem> items = drain(stream(mock.handle(exchange)));

        assertThat(items.subList(items.size() - 3, items.size())).containsExactly(
            new StreamEvent.Stop(StopReason.END_TURN, "stop", exchange.usage()),
            new StreamEvent.UsageReport(exchange.usage()),
            StreamItem.END);
        StringBuilder text = new StringBuilder();
        for (StreamItem item : items)
        {
            if (item instanceof StreamEvent.TextDelta delta)
                text.append(delta.text());
        }
        assertThat(text.toString()).isEqualTo(MockOptions.DEFAULT_TEXT);
    }

    @Test
    void streamedEchoConcatenatesToTheAnswer()
    {
        ClientBinding mock = create("{\"echo\":true}");
        TestExchange exchange = new TestExchange(request("demo", true, false, "tell me\na story"), BODY);

        StringBuilder text = new StringBuilder();
        for (StreamItem item : drain(stream(mock.handle(exchange))))
        {
            if (item instanceof StreamEvent.TextDelta delta)
                text.append(delta.text());
        }

        assertThat(text.toString()).isEqualTo("You said: tell me\na story");
        assertThat(exchange.modified()).isFalse();
    }

    @Test
    void keepsReturningEndAfterTheEnd()
    {
        EventStream events = stream(create("{}").handle(new TestExchange(request("demo", true, false, "Hi"), BODY)));
        drain(events);

        assertThat(events.read()).isSameAs(StreamItem.END);
        assertThat(events.read()).isSameAs(StreamItem.END);
    }

    @Test
    void demandCallsBackAtOnceUntilCancelled()
    {
        EventStream events = stream(create("{}").handle(new TestExchange(request("demo", true, false, "Hi"), BODY)));
        AtomicInteger callbacks = new AtomicInteger();

        events.demand(callbacks::incrementAndGet);
        assertThat(events.read()).isInstanceOf(StreamEvent.MessageStart.class);
        events.cancel(new RuntimeException("client went away"));
        events.cancel(null);
        events.demand(callbacks::incrementAndGet);

        assertThat(callbacks).hasValue(1);
        assertThat(events.read()).isNull();
    }

    @Test
    void undecodableBodyFailsTheStage()
    {
        ClientBinding mock = create("{\"echo\":true}");
        Exchange broken = new TestExchange(request("demo", false, false, "x"), BODY)
            .decodeFailure(new GatewayException(ErrorKind.INVALID_REQUEST, "messages: wrong type"));

        CompletableFuture<Reply> stage = mock.handle(broken).toCompletableFuture();

        assertThatThrownBy(stage::get).hasCauseInstanceOf(GatewayException.class).hasMessageContaining("messages: wrong type");
    }

    @Test
    void splitsWordsWithLeadingWhitespace()
    {
        assertThat(MockClient.words("Hello from  Sluice.")).containsExactly("Hello", " from", "  Sluice.");
        assertThat(MockClient.words(" lead\ttab ")).containsExactly(" lead", "\ttab", " ");
        assertThat(MockClient.words("")).isEmpty();
    }

    @Test
    void estimatesInputTokensFromTheRawBody()
    {
        assertThat(MockClient.inputTokens("{\"a\":\"b c-d\"}".getBytes(java.nio.charset.StandardCharsets.UTF_8))).isEqualTo(4);
        assertThat(MockClient.inputTokens(new byte[0])).isEqualTo(1);
    }

    @Test
    void rejectsUnknownOptionWithItsPath()
    {
        assertThatThrownBy(() -> create("{\"txt\":\"hi\"}"))
            .isInstanceOf(ConfigException.class)
            .hasMessage("bindings.south_mock.options.txt: unknown key (expected one of: cut_after_events, delay, echo, "
                + "fail_after_events, fail_status, retry_after, text)");
    }

    @Test
    void rejectsEmptyTextWithItsPath()
    {
        assertThatThrownBy(() -> create("{\"text\":\"\"}"))
            .isInstanceOf(ConfigException.class)
            .satisfies(e -> assertThat(((ConfigException)e).path()).isEqualTo("bindings.south_mock.options.text"));
    }

    @Test
    void rejectsTextTogetherWithEcho()
    {
        assertThatThrownBy(() -> create("{\"text\":\"hi\",\"echo\":true}"))
            .isInstanceOf(ConfigException.class)
            .satisfies(e -> assertThat(((ConfigException)e).path()).isEqualTo("bindings.south_mock.options.echo"));
    }

    @Test
    void rejectsEchoThatIsNotABoolean()
    {
        assertThatThrownBy(() -> create("{\"echo\":\"yes\"}"))
            .isInstanceOf(ConfigException.class)
            .satisfies(e -> assertThat(((ConfigException)e).path()).isEqualTo("bindings.south_mock.options.echo"));
    }

    @Test
    void failStatus429IsRateLimitedWithRetryAfter()
    {
        ClientBinding mock = create("{\"fail_status\":429,\"retry_after\":\"2s\"}");
        TestExchange exchange = new TestExchange(request("demo", false, false, "Hi"), BODY);

        GatewayException failure = failure(mock.handle(exchange));

        assertThat(failure.kind()).isEqualTo(ErrorKind.RATE_LIMITED);
        assertThat(failure.status()).isEqualTo(429);
        assertThat(failure.getMessage()).isEqualTo("mock: configured to fail with 429");
        assertThat(failure.headers().get("retry-after")).isEqualTo("2");
        assertThat(failure.headers().size()).isEqualTo(1);
        assertThat(exchange.decodes()).isZero();
        assertThat(exchange.usage()).isNull();
    }

    @ParameterizedTest(name = "fail_status {0} is {1} with status {0}")
    @CsvSource({
        "500, UPSTREAM_ERROR",
        "503, UPSTREAM_ERROR",
        "529, UPSTREAM_ERROR",
        "599, UPSTREAM_ERROR",
        "400, INVALID_REQUEST",
        "401, AUTHENTICATION",
        "403, PERMISSION",
        "404, NOT_FOUND",
        "413, REQUEST_TOO_LARGE",
        "422, INVALID_REQUEST",
        "429, RATE_LIMITED"})
    void failStatusKeepsItsStatusAndHasTheKindOfAnUpstreamErrorOfThatStatus(int status, ErrorKind kind)
    {
        ClientBinding mock = create("{\"fail_status\":" + status + "}");

        GatewayException failure = failure(mock.handle(new TestExchange(request("demo", false, false, "Hi"), BODY)));

        assertThat(failure.kind()).isEqualTo(kind);
        assertThat(failure.status()).isEqualTo(status);
        assertThat(failure.getMessage()).isEqualTo("mock: configured to fail with " + status);
        assertThat(failure.headers().isEmpty()).isTrue();
    }

    @Test
    void failStatusFailsAStreamedRequestBeforeAnyStream()
    {
        ClientBinding mock = create("{\"fail_status\":503,\"retry_after\":\"1s\"}");
        TestExchange exchange = new TestExchange(request("demo", true, false, "Hi"), BODY);

        GatewayException failure = failure(mock.handle(exchange));

        assertThat(failure.kind()).isEqualTo(ErrorKind.UPSTREAM_ERROR);
        assertThat(failure.status()).isEqualTo(503);
        assertThat(failure.headers().get("retry-after")).isEqualTo("1");
        assertThat(exchange.decodes()).isZero();
    }

    @Test
    void retryAfterIsRoundedUpToWholeSeconds()
    {
        ClientBinding mock = create("{\"fail_status\":429,\"retry_after\":\"1500ms\"}");

        GatewayException failure = failure(mock.handle(new TestExchange(request("demo", false, false, "Hi"), BODY)));

        assertThat(failure.headers().get("retry-after")).isEqualTo("2");
    }

    @Test
    void delayedAnswerCompletesOnlyAfterTheScheduledTaskAndTheExecutorRan()
    {
        TestBindingContext context = new TestBindingContext();
        ClientBinding mock = create("{\"delay\":\"250ms\"}", context);
        TestExchange exchange = new TestExchange(request("demo", false, false, "Hi"), BODY);

        CompletableFuture<Reply> stage = mock.handle(exchange).toCompletableFuture();

        assertThat(stage).isNotDone();
        assertThat(context.scheduledTasks()).hasSize(1);
        RecordedTask task = context.scheduledTasks().get(0);
        assertThat(task.periodic()).isFalse();
        assertThat(task.initialDelay()).isEqualTo(Duration.ofMillis(250));
        assertThat(context.submitted()).isEmpty();

        task.run();
        // The scheduler's thread only hands the completion on: the stages after the mock run on the executor.
        assertThat(stage).isNotDone();
        assertThat(context.runSubmitted()).isEqualTo(1);

        assertThat(message(stage).content()).containsExactly(new ContentPart.Text(MockOptions.DEFAULT_TEXT));
    }

    @Test
    void delayedFailureFailsOnlyAfterTheDelay()
    {
        TestBindingContext context = new TestBindingContext();
        ClientBinding mock = create("{\"fail_status\":503,\"delay\":\"2s\"}", context);

        CompletableFuture<Reply> stage = mock.handle(new TestExchange(request("demo", false, false, "Hi"), BODY))
            .toCompletableFuture();

        assertThat(stage).isNotDone();
        assertThat(context.scheduledTasks()).singleElement()
            .satisfies(task -> assertThat(task.initialDelay()).isEqualTo(Duration.ofSeconds(2)));
        context.scheduledTasks().get(0).run();
        context.runSubmitted();

        GatewayException failure = failure(stage);
        assertThat(failure.kind()).isEqualTo(ErrorKind.UPSTREAM_ERROR);
        assertThat(failure.status()).isEqualTo(503);
    }

    @Test
    void delayedStreamStartsOnlyAfterTheDelay()
    {
        TestBindingContext context = new TestBindingContext();
        ClientBinding mock = create("{\"text\":\"One two\",\"delay\":\"250ms\"}", context);

        CompletableFuture<Reply> stage = mock.handle(new TestExchange(request("demo", true, false, "Hi"), BODY))
            .toCompletableFuture();

        assertThat(stage).isNotDone();
        context.scheduledTasks().get(0).run();
        context.runSubmitted();

        List<StreamItem> items = drain(stream(stage));
        assertThat(items.get(0)).isInstanceOf(StreamEvent.MessageStart.class);
        assertThat(items.get(items.size() - 1)).isSameAs(StreamItem.END);
    }

    @Test
    void abortDuringTheDelayCancelsTheTaskAndFailsTheStageAsUpstreamUnavailable()
    {
        TestBindingContext context = new TestBindingContext();
        ClientBinding mock = create("{\"delay\":\"250ms\"}", context);
        TestExchange exchange = new TestExchange(request("demo", false, false, "Hi"), BODY);
        CompletableFuture<Reply> stage = mock.handle(exchange).toCompletableFuture();
        RuntimeException cause = new RuntimeException("client went away");

        exchange.abort(cause);

        assertThat(context.scheduledTasks().get(0).cancelled()).isTrue();
        GatewayException failure = failure(stage);
        assertThat(failure.kind()).isEqualTo(ErrorKind.UPSTREAM_UNAVAILABLE);
        assertThat(failure.getMessage()).isEqualTo("mock: exchange aborted during the delay");
        assertThat(failure.getCause()).isSameAs(cause);

        // A scheduler that ran the task anyway, racing the cancel, changes nothing.
        context.scheduledTasks().get(0).run();
        context.runSubmitted();
        assertThat(failure(stage).kind()).isEqualTo(ErrorKind.UPSTREAM_UNAVAILABLE);
    }

    @Test
    void exchangeAbortedBeforeTheMockRunsFailsAtOnce()
    {
        TestBindingContext context = new TestBindingContext();
        ClientBinding mock = create("{\"delay\":\"1h\"}", context);
        TestExchange exchange = new TestExchange(request("demo", false, false, "Hi"), BODY);
        exchange.abort(new RuntimeException("gateway stopping"));

        CompletableFuture<Reply> stage = mock.handle(exchange).toCompletableFuture();

        assertThat(failure(stage).kind()).isEqualTo(ErrorKind.UPSTREAM_UNAVAILABLE);
        assertThat(context.scheduledTasks().get(0).cancelled()).isTrue();
    }

    @Test
    void abortAfterTheDelayedAnswerLeavesTheAnswer()
    {
        TestBindingContext context = new TestBindingContext();
        ClientBinding mock = create("{\"delay\":\"250ms\"}", context);
        TestExchange exchange = new TestExchange(request("demo", false, false, "Hi"), BODY);
        CompletableFuture<Reply> stage = mock.handle(exchange).toCompletableFuture();
        context.scheduledTasks().get(0).run();
        context.runSubmitted();

        exchange.abort(new RuntimeException("client went away"));

        assertThat(message(stage).content()).containsExactly(new ContentPart.Text(MockOptions.DEFAULT_TEXT));
    }

    @Test
    void noDelayOrAZeroDelayAnswersAtOnceWithoutScheduling()
    {
        for (String options : List.of("{}", "{\"delay\":\"0ms\"}", "{\"fail_after_events\":1}"))
        {
            TestBindingContext context = new TestBindingContext().refuseOneShotSchedules();
            ClientBinding mock = create(options, context);
            TestExchange exchange = new TestExchange(request("demo", true, false, "Hi"), BODY);

            CompletableFuture<Reply> stage = mock.handle(exchange).toCompletableFuture();

            assertThat(stage).as(options).isDone();
            assertThat(exchange.abortListeners()).as(options).isEmpty();
            assertThat(context.scheduledTasks()).as(options).isEmpty();
            assertThat(context.submitted()).as(options).isEmpty();
        }
    }

    @Test
    void failAfterEventsSendsExactlyThatManyTextDeltasThenAnUpstreamError()
    {
        ClientBinding mock = create("{\"text\":\"One two three four\",\"fail_after_events\":2}");
        TestExchange exchange = new TestExchange(request("demo", true, true, "Hi"), BODY);
        EventStream events = stream(mock.handle(exchange));

        List<StreamItem> items = drain(events);

        assertThat(items).hasSize(5);
        assertThat(items.get(0)).isInstanceOf(StreamEvent.MessageStart.class);
        assertThat(items.subList(1, 4)).containsExactly(
            new StreamEvent.TextStart(0),
            new StreamEvent.TextDelta(0, "One"),
            new StreamEvent.TextDelta(0, " two"));
        GatewayException error = ((StreamEvent.Error)items.get(4)).error();
        assertThat(error.kind()).isEqualTo(ErrorKind.UPSTREAM_ERROR);
        assertThat(error.status()).isEqualTo(503);
        assertThat(error.getMessage()).isEqualTo("mock: stream failed after 2 text deltas");
        assertThat(events.read()).isSameAs(items.get(4));
        assertThat(exchange.usage().outputTokens()).isEqualTo(2);
    }

    @Test
    void cutAfterEventsSendsExactlyThatManyTextDeltasThenEndsAsACutConnection()
    {
        ClientBinding mock = create("{\"text\":\"One two three four\",\"cut_after_events\":3}");
        EventStream events = stream(mock.handle(new TestExchange(request("demo", true, false, "Hi"), BODY)));

        List<StreamItem> items = drain(events);

        assertThat(items).hasSize(6);
        assertThat(items.subList(1, 5)).containsExactly(
            new StreamEvent.TextStart(0),
            new StreamEvent.TextDelta(0, "One"),
            new StreamEvent.TextDelta(0, " two"),
            new StreamEvent.TextDelta(0, " three"));
        GatewayException error = ((StreamEvent.Error)items.get(5)).error();
        assertThat(error.kind()).isEqualTo(ErrorKind.UPSTREAM_UNAVAILABLE);
        assertThat(error.status()).isEqualTo(502);
        assertThat(error.getMessage()).isEqualTo("mock: stream cut after 3 text deltas");
        assertThat(events.read()).isSameAs(items.get(5));
    }

    @Test
    void failAfterZeroEventsFailsRightAfterTheTextStart()
    {
        ClientBinding mock = create("{\"fail_after_events\":0}");

        List<StreamItem> items = drain(stream(mock.handle(new TestExchange(request("demo", true, false, "Hi"), BODY))));

        assertThat(items).hasSize(3);
        assertThat(items.get(1)).isEqualTo(new StreamEvent.TextStart(0));
        assertThat(((StreamEvent.Error)items.get(2)).error().getMessage()).isEqualTo("mock: stream failed after 0 text deltas");
    }

    @Test
    void failAfterMoreEventsThanTheAnswerHasFailsInPlaceOfTheBlockStop()
    {
        ClientBinding mock = create("{\"text\":\"One two\",\"cut_after_events\":10}");

        List<StreamItem> items = drain(stream(mock.handle(new TestExchange(request("demo", true, false, "Hi"), BODY))));

        assertThat(items).hasSize(5);
        assertThat(items.subList(1, 4)).containsExactly(
            new StreamEvent.TextStart(0),
            new StreamEvent.TextDelta(0, "One"),
            new StreamEvent.TextDelta(0, " two"));
        assertThat(((StreamEvent.Error)items.get(4)).error().getMessage()).isEqualTo("mock: stream cut after 2 text deltas");
    }

    @Test
    void streamOptionsLeaveAnswersThatAreNotStreamedAlone()
    {
        for (String options : List.of("{\"fail_after_events\":0}", "{\"cut_after_events\":1}"))
        {
            TestExchange exchange = new TestExchange(request("demo", false, false, "Hi"), BODY);

            ChatResponse response = message(create(options).handle(exchange));

            assertThat(response.content()).as(options).containsExactly(new ContentPart.Text(MockOptions.DEFAULT_TEXT));
            assertThat(exchange.usage().outputTokens()).as(options).isEqualTo(6);
        }
    }

    @Test
    void rejectsFailStatusThatIsNotAnErrorStatusWithItsPath()
    {
        assertRejected("{\"fail_status\":200}", "fail_status", "value: 200 (expected: an error status, 400..599)");
        assertRejected("{\"fail_status\":600}", "fail_status", "value: 600 (expected: an error status, 400..599)");
        assertRejected("{\"fail_status\":\"503\"}", "fail_status", "wrong type (expected: an integer)");
    }

    @Test
    void rejectsNegativeCountsAndDurationsWithTheirPath()
    {
        assertRejected("{\"fail_after_events\":-1}", "fail_after_events", "value: -1 (expected: 0 or more)");
        assertRejected("{\"cut_after_events\":-1}", "cut_after_events", "value: -1 (expected: 0 or more)");
        assertRejected("{\"delay\":\"-250ms\"}", "delay", "value: PT-0.25S (expected: 0ms or more)");
        assertRejected("{\"fail_status\":429,\"retry_after\":\"-1s\"}", "retry_after", "value: PT-1S (expected: 0s or more)");
        assertRejected("{\"delay\":\"soon\"}", "delay", "value: \"soon\" (expected: a duration such as 250ms, 30s, 5m, 1h)");
    }

    @Test
    void rejectsOptionsThatCannotAllTakeEffectWithThePathOfTheOneThatWouldNot()
    {
        assertRejected("{\"retry_after\":\"2s\"}", "retry_after",
            "value: PT2S (expected: absent unless fail_status is set; it is a header of that failure)");
        assertRejected("{\"fail_after_events\":1,\"cut_after_events\":2}", "cut_after_events",
            "value: 2 (expected: absent when fail_after_events is set; a stream ends one way)");
        assertRejected("{\"fail_status\":503,\"fail_after_events\":1}", "fail_after_events",
            "value: 1 (expected: absent when fail_status is set; no stream starts then)");
        assertRejected("{\"fail_status\":503,\"cut_after_events\":1}", "cut_after_events",
            "value: 1 (expected: absent when fail_status is set; no stream starts then)");
    }

    private void assertRejected(String options, String key, String message)
    {
        String path = "bindings.south_mock.options." + key;
        assertThatThrownBy(() -> create(options))
            .as(options)
            .isInstanceOf(ConfigException.class)
            .hasMessage(path + ": " + message)
            .satisfies(e -> assertThat(((ConfigException)e).path()).isEqualTo(path));
    }

    private ClientBinding create(String options)
    {
        return create(options, new TestBindingContext());
    }

    private ClientBinding create(String options, TestBindingContext context)
    {
        BindingConfig config = new BindingConfig("south_mock", "mock", BindingKind.CLIENT, json(options), null, List.of());
        return factory.create(config, context);
    }

    private static GatewayException failure(CompletionStage<Reply> stage)
    {
        CompletableFuture<Reply> future = stage.toCompletableFuture();
        assertThat(future).isCompletedExceptionally();
        try
        {
            future.get();
            throw new AssertionError("the stage did not fail");
        }
        catch (ExecutionException e)
        {
            assertThat(e.getCause()).isInstanceOf(GatewayException.class);
            return (GatewayException)e.getCause();
        }
        catch (InterruptedException e)
        {
            throw new AssertionError(e);
        }
    }

    private static ChatRequest request(String model, boolean stream, boolean includeUsage, String userText)
    {
        return new ChatRequest(model, List.of(), List.of(Message.text(Role.USER, userText)), List.of(), null, null, null, null,
            stream, includeUsage, null, null, null);
    }

    private static JsonNode json(String text)
    {
        try
        {
            return Json.MAPPER.readTree(text);
        }
        catch (Exception e)
        {
            throw new AssertionError(e);
        }
    }

    private static ChatResponse message(CompletionStage<Reply> stage)
    {
        return ((Reply.Message)get(stage)).response();
    }

    private static EventStream stream(CompletionStage<Reply> stage)
    {
        return ((Reply.Stream)get(stage)).events();
    }

    private static Reply get(CompletionStage<Reply> stage)
    {
        try
        {
            return stage.toCompletableFuture().get();
        }
        catch (InterruptedException | ExecutionException e)
        {
            throw new AssertionError(e);
        }
    }

    /** Reads like the runtime does: until null, then demand; stops at the terminal item. */
    private static List<StreamItem> drain(EventStream events)
    {
        List<StreamItem> items = new ArrayList<>();
        new Runnable()
        {
            @Override
            public void run()
            {
                StreamItem item;
                while ((item = events.read()) != null)
                {
                    items.add(item);
                    if (item == StreamItem.END || item instanceof StreamEvent.Error)
                        return;
                }
                events.demand(this);
            }
        }.run();
        return items;
    }
}
