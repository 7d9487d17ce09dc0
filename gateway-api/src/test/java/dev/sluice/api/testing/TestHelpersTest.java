package dev.sluice.api.testing;

import dev.sluice.api.ErrorKind;
import dev.sluice.api.GatewayException;
import dev.sluice.api.admin.AdminRoutes.AdminHandler;
import dev.sluice.api.codec.RequestPeek;
import dev.sluice.api.config.ConfigException;
import dev.sluice.api.exchange.Exchange.Attempt;
import dev.sluice.api.exchange.Completion;
import dev.sluice.api.exchange.Completion.CompletionListener;
import dev.sluice.api.exchange.Reply;
import dev.sluice.api.exchange.Exchange.Stage;
import dev.sluice.api.model.ChatRequest;
import dev.sluice.api.model.Message;
import dev.sluice.api.model.Message.Role;
import dev.sluice.api.binding.BindingContext.RuntimeStats;
import dev.sluice.api.binding.BindingContext.Scheduler;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class TestHelpersTest
{
    @Test
    void exchangeFromAModelHasAMatchingBodyPeekAndRequest()
    {
        TestExchange exchange = new TestExchange("a\"b");

        String body = new String(exchange.body(), StandardCharsets.UTF_8);
        assertThat(body).isEqualTo("{\"model\":\"a\\\"b\",\"messages\":[]}");
        assertThat(exchange.peek()).isEqualTo(new RequestPeek("a\"b", false, 9, 15));
        assertThat(body.substring(9, 15)).isEqualTo("\"a\\\"b\"");
        assertThat(exchange.dialect()).isEqualTo("openai");
        assertThat(exchange.targetModel()).isEqualTo("a\"b");
        assertThat(exchange.decodes()).isZero();
        assertThat(exchange.request().model()).isEqualTo("a\"b");
        assertThat(exchange.request().messages()).isEmpty();
        assertThat(exchange.decodes()).isEqualTo(2);
    }

    @Test
    void peekFindsTheModelInARawBodyOrSaysItIsAbsent()
    {
        ChatRequest request = request("demo", true);

        String spaced = "{\"stream\":true, \"model\" : \"demo\"}";
        int start = spaced.indexOf("\"demo\"");

        assertThat(new TestExchange(request, spaced).peek()).isEqualTo(new RequestPeek("demo", true, start, start + 6));
        assertThat(new TestExchange(request, "{\"model\":\"other\"}").peek()).isEqualTo(new RequestPeek("demo", true, -1, -1));
        assertThat(new TestExchange(request, "{}").peek()).isEqualTo(new RequestPeek("demo", true, -1, -1));
        assertThat(new TestExchange(request, "{}").stream()).isTrue();
    }

    @Test
    void replacingTheRequestMarksTheExchangeModified()
    {
        TestExchange exchange = new TestExchange(request("demo", false), "{}").decodeFailure(new IllegalStateException());
        ChatRequest rewritten = request("demo", false).withModel("other");

        exchange.request(rewritten);

        assertThat(exchange.modified()).isTrue();
        assertThat(exchange.request()).isSameAs(rewritten);
    }

    @Test
    void decodeFailureIsThrownAndCounted()
    {
        GatewayException failure = new GatewayException(ErrorKind.INVALID_REQUEST, "messages: wrong type");
        TestExchange exchange = new TestExchange(request("demo", false), "{}").decodeFailure(failure);

        assertThatThrownBy(exchange::request).isSameAs(failure);
        assertThat(exchange.decodes()).isEqualTo(1);
        assertThat(exchange.modified()).isFalse();
    }

    @Test
    void abortRunsEachListenerOnceAndLateListenersAtOnce()
    {
        TestExchange exchange = new TestExchange("demo");
        List<String> calls = new ArrayList<>();
        exchange.onAbort(cause -> calls.add("early " + cause.getMessage()));

        exchange.abort(new Exception("gone"));
        exchange.abort(new Exception("again"));
        exchange.onAbort(cause -> calls.add("late " + cause.getMessage()));

        assertThat(calls).containsExactly("early gone", "late gone");
        assertThat(exchange.abortListeners()).hasSize(2);
    }

    @Test
    void recordsAttributesUsageTargetModelAndHeaders()
    {
        TestExchange exchange = new TestExchange("demo").dialect("anthropic").header("X-Api-Key", "k1").header("x-api-key", "k2");

        exchange.attribute("p.a", 1);
        exchange.targetModel("real");

        assertThat(exchange.dialect()).isEqualTo("anthropic");
        assertThat(exchange.headers().get("X-API-KEY")).isEqualTo("k1");
        assertThat(exchange.headers().getAll("x-api-key")).containsExactly("k1", "k2");
        assertThat(exchange.headers().get("authorization")).isNull();
        assertThat(exchange.attribute("p.a")).isEqualTo(1);
        exchange.attribute("p.a", null);
        assertThat(exchange.attribute("p.a")).isNull();
        assertThat(exchange.targetModel()).isEqualTo("real");
        assertThat(exchange.model()).isEqualTo("demo");
        assertThat(exchange.usage()).isNull();
    }

    @Test
    void exchangeListsTheAttemptsSetAndTheFirstEndOfAPendingAttemptWins()
    {
        TestExchange exchange = new TestExchange("demo");
        assertThat(exchange.attempt()).isNull();
        assertThat(exchange.attempts()).isEmpty();

        TestAttempt failed = TestAttempt.failed(1, "south_a", 500, ErrorKind.UPSTREAM_ERROR);
        TestAttempt answered = TestAttempt.answered(2, "south_b");
        exchange.attempts(failed, answered);

        assertThat(exchange.attempts()).containsExactly(failed, answered);
        assertThat(exchange.attempt()).isSameAs(answered);
        assertThat(failed.result()).isEqualTo(Attempt.Result.FAILED);
        assertThat(failed.status()).isEqualTo(500);
        assertThat(answered.endNanos() - answered.startNanos()).isEqualTo(1_000_000);
        assertThat(answered.nanos(Stage.UPSTREAM_SEND)).isZero();
        assertThat(answered.atNanos(Stage.UPSTREAM_SEND, 42).nanos(Stage.UPSTREAM_SEND)).isEqualTo(42);
        assertThatThrownBy(() -> answered.atNanos(Stage.ARRIVAL, 1)).isInstanceOf(IllegalArgumentException.class);

        TestAttempt pending = new TestAttempt();
        pending.fail(new GatewayException(ErrorKind.UPSTREAM_TIMEOUT, "first byte timeout"));
        pending.cancel(new IllegalStateException("too late"));
        assertThat(pending.result()).isEqualTo(Attempt.Result.FAILED);
        assertThat(pending.errorKind()).isEqualTo(ErrorKind.UPSTREAM_TIMEOUT);
        assertThat(pending.endNanos()).isPositive();
    }

    @Test
    void startingAnAttemptFailsThePendingOneAndResetsTheTargetModelAndUsage()
    {
        TestExchange exchange = new TestExchange("gpt-4o");
        Attempt first = exchange.startAttempt("south_a");
        exchange.targetModel("alias-a");
        exchange.usage(new dev.sluice.api.model.Usage(3, 1, 0, 0, 0));

        Attempt second = exchange.startAttempt("south_b");

        assertThat(first.result()).isEqualTo(Attempt.Result.FAILED);
        assertThat(first.targetModel()).isEqualTo("alias-a");
        assertThat(exchange.targetModel()).as("back to the model the route matched").isEqualTo("gpt-4o");
        assertThat(exchange.usage()).isNull();
        assertThat(second.number()).isEqualTo(2);
        assertThat(exchange.attempts()).extracting(Attempt::target).containsExactly("south_a", "south_b");
    }

    @Test
    void contextExitsRecordAndAnswerWithTheirName()
    {
        TestBindingContext context = new TestBindingContext("a", "b").env("KEY", "secret");
        TestExchange exchange = new TestExchange("demo");
        exchange.targetModel("real");

        Reply reply = context.exit("b").handle(exchange).toCompletableFuture().join();

        assertThat(new String(((Reply.Bytes)reply).body(), StandardCharsets.UTF_8)).isEqualTo("b");
        assertThat(context.recorder("b").received()).containsExactly(exchange);
        assertThat(context.recorder("b").targetModels()).containsExactly("real");
        assertThat(context.recorder("a").received()).isEmpty();
        assertThat(context.calls()).isEqualTo(1);
        assertThat(context.env("KEY")).isEqualTo("secret");
        assertThat(context.env("OTHER")).isNull();
    }

    @Test
    void contextRejectsUnknownExitsAndHasNoUpstream()
    {
        TestBindingContext context = new TestBindingContext("a");

        assertThatThrownBy(() -> context.exit("c"))
            .isInstanceOf(ConfigException.class)
            .hasMessage("exit: value: \"c\" (expected one of: a)");
        assertThatThrownBy(() -> context.upstream(null)).isInstanceOf(AssertionError.class);
    }

    @Test
    void contextIsNotCheckOnlyAndKnowsNoBindingNameUntilSet()
    {
        TestBindingContext context = new TestBindingContext();

        assertThat(context.checkOnly()).isFalse();
        assertThatThrownBy(context::bindingName).isInstanceOf(UnsupportedOperationException.class);

        assertThat(context.checkOnly(true).bindingName("log")).isSameAs(context);
        assertThat(context.checkOnly()).isTrue();
        assertThat(context.bindingName()).isEqualTo("log");
    }

    @Test
    void contextRecordsAdminRoutesAndCompletionListenersInOrder()
    {
        TestBindingContext context = new TestBindingContext();
        AdminHandler first = request -> CompletableFuture.completedFuture(null);
        AdminHandler second = request -> CompletableFuture.completedFuture(null);
        AdminHandler replacement = request -> CompletableFuture.completedFuture(null);
        CompletionListener listener = completion -> { };

        assertThat(context.adminRoutes()).isEmpty();
        assertThat(context.completionListeners()).isEmpty();
        context.admin().add("GET", "/b", first);
        context.admin().add("POST", "/a", second);
        context.admin().add("GET", "/b", replacement);
        context.onComplete(listener);

        assertThat(context.adminRoutes()).containsOnlyKeys("GET /b", "POST /a");
        assertThat(context.adminRoutes().keySet()).containsExactly("GET /b", "POST /a");
        assertThat(context.adminRoutes().get("GET /b")).isSameAs(replacement);
        assertThat(context.completionListeners()).containsExactly(listener);
        assertThatThrownBy(() -> context.adminRoutes().clear()).isInstanceOf(UnsupportedOperationException.class);
        assertThatThrownBy(() -> context.completionListeners().clear()).isInstanceOf(UnsupportedOperationException.class);
    }

    @Test
    void contextSchedulerRecordsTasksThatOnlyTheTestRunsAndThatCancelOnce()
    {
        TestBindingContext context = new TestBindingContext();
        List<String> runs = new ArrayList<>();

        Scheduler.Task periodic = context.scheduler().scheduleWithFixedDelay(() -> runs.add("tick"), Duration.ofSeconds(1),
            Duration.ofMinutes(2));
        Scheduler.Task once = context.scheduler().schedule(() -> runs.add("once"), Duration.ofMillis(5));

        assertThat(runs).isEmpty();
        assertThat(context.scheduledTasks()).containsExactly((TestBindingContext.RecordedTask)periodic,
            (TestBindingContext.RecordedTask)once);
        TestBindingContext.RecordedTask tick = context.scheduledTasks().get(0);
        assertThat(tick.periodic()).isTrue();
        assertThat(tick.initialDelay()).isEqualTo(Duration.ofSeconds(1));
        assertThat(tick.delay()).isEqualTo(Duration.ofMinutes(2));
        TestBindingContext.RecordedTask single = context.scheduledTasks().get(1);
        assertThat(single.periodic()).isFalse();
        assertThat(single.initialDelay()).isEqualTo(Duration.ofMillis(5));
        assertThat(single.delay()).isEqualTo(Duration.ofMillis(5));

        tick.run();
        tick.runnable().run();
        assertThat(runs).containsExactly("tick", "tick");

        assertThat(tick.cancelled()).isFalse();
        assertThat(periodic.cancel()).isTrue();
        assertThat(periodic.cancel()).as("idempotent").isFalse();
        assertThat(tick.cancelled()).isTrue();
        assertThat(single.cancelled()).isFalse();
    }

    @Test
    void contextCanRefuseOneShotSchedulesButStillRecordsPeriodicOnes()
    {
        TestBindingContext context = new TestBindingContext().refuseOneShotSchedules();

        assertThatThrownBy(() -> context.scheduler().schedule(() -> { }, Duration.ZERO)).isInstanceOf(AssertionError.class);
        context.scheduler().scheduleWithFixedDelay(() -> { }, Duration.ZERO, Duration.ofMillis(250));

        assertThat(context.scheduledTasks()).singleElement().satisfies(t ->
            assertThat(t.delay()).isEqualTo(Duration.ofMillis(250)));
    }

    @Test
    void contextExecutorRecordsTasksRunsThemOnRequestAndRefusesUnderCheckMode()
    {
        TestBindingContext context = new TestBindingContext();
        List<String> runs = new ArrayList<>();
        Executor executor = context.executor();

        executor.execute(() ->
        {
            runs.add("first");
            executor.execute(() -> runs.add("nested"));
        });
        executor.execute(() -> runs.add("second"));

        assertThat(runs).isEmpty();
        assertThat(context.submitted()).hasSize(2);
        assertThat(context.runSubmitted()).isEqualTo(3);
        assertThat(runs).containsExactly("first", "second", "nested");
        assertThat(context.submitted()).isEmpty();
        assertThat(context.runSubmitted()).isZero();

        context.checkOnly(true);
        assertThatThrownBy(() -> executor.execute(() -> runs.add("refused")))
            .isInstanceOf(RejectedExecutionException.class);
        assertThat(context.submitted()).isEmpty();
    }

    @Test
    void contextAdvertisesTheModelsSetAndCountsReads()
    {
        TestBindingContext context = new TestBindingContext();

        assertThat(context.advertisedModelsReads()).isZero();
        Set<String> kept = context.advertisedModels();
        assertThat(kept).isEmpty();

        context.advertisedModels("b", "a");
        assertThat(kept).as("a live view").containsExactly("b", "a");
        assertThat(context.advertisedModels()).containsExactly("b", "a");
        context.advertisedModels("c");
        assertThat(context.advertisedModels()).containsExactly("c");
        assertThat(context.advertisedModelsReads()).isEqualTo(3);
        assertThatThrownBy(() -> kept.add("d")).isInstanceOf(UnsupportedOperationException.class);
    }

    @Test
    void contextRuntimeStatsReadWhatIsSetAtEachCall()
    {
        TestBindingContext context = new TestBindingContext();
        RuntimeStats stats = context.runtimeStats();
        RuntimeStats.UpstreamStats south = new RuntimeStats.UpstreamStats("south", "http://127.0.0.1:1", 5, 2, 3, 256, 4);
        RuntimeStats.UpstreamStats north = new RuntimeStats.UpstreamStats("north", "http://127.0.0.1:2", 0, 0, 0, 16, 0);

        assertThat(stats.inFlight()).isZero();
        assertThat(stats.upstreams()).isEmpty();

        context.inFlight(3).upstreamStats(south, north);
        List<RuntimeStats.UpstreamStats> before = stats.upstreams();
        assertThat(stats.inFlight()).isEqualTo(3);
        assertThat(before).containsExactly(south, north);

        context.inFlight(0).upstreamStats(north);
        assertThat(stats.inFlight()).isZero();
        assertThat(stats.upstreams()).containsExactly(north);
        assertThat(before).as("a copy per call").containsExactly(south, north);
    }

    @Test
    void completionDefaultsAreAnAnswerThatArrivedTenSecondsAgoAndReachedNoOtherStage()
    {
        long before = System.nanoTime();
        TestCompletion c = new TestCompletion();
        long after = System.nanoTime();

        assertThat(c.id()).isEqualTo("r1");
        assertThat(c.server()).isEqualTo("north");
        assertThat(c.dialect()).isEqualTo("openai");
        assertThat(c.method()).isEqualTo("POST");
        assertThat(c.path()).isEqualTo("/v1/chat/completions");
        assertThat(c.outcome()).isEqualTo(Completion.Outcome.COMPLETED);
        assertThat(c.status()).isEqualTo(200);
        assertThat(c.model()).isNull();
        assertThat(c.targetModel()).isNull();
        assertThat(c.route()).isNull();
        assertThat(c.requestBytes()).isZero();
        assertThat(c.nanos(Stage.ARRIVAL)).isBetween(before - 10_000_000_000L, after - 10_000_000_000L);
        for (Stage stage : Stage.values())
        {
            if (stage != Stage.ARRIVAL)
                assertThat(c.nanos(stage)).as(stage.name()).isZero();
        }
    }

    @Test
    void completionStagesAreSetInMicrosAfterArrivalOrAsNanoTimes()
    {
        TestCompletion c = new TestCompletion().atNanos(Stage.ARRIVAL, 5_000);

        c.at(Stage.RESPONSE_END, 40).atNanos(Stage.FIRST_EVENT, 7_777);

        assertThat(c.nanos(Stage.RESPONSE_END)).isEqualTo(45_000);
        assertThat(c.nanos(Stage.FIRST_EVENT)).isEqualTo(7_777);
        assertThat(c.atNanos(Stage.FIRST_EVENT, 0).nanos(Stage.FIRST_EVENT)).isZero();
        assertThatThrownBy(() -> c.at(Stage.ARRIVAL, 1)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void servedCompletionHasARouteAModelAndEveryStageButTheFirstEvent()
    {
        TestCompletion c = TestCompletion.served();
        long arrival = c.nanos(Stage.ARRIVAL);

        assertThat(c.route()).isEqualTo("south");
        assertThat(c.model()).isEqualTo("gpt-4o");
        assertThat(c.targetModel()).isEqualTo("gpt-4o");
        assertThat(c.requestBytes()).isEqualTo(100);
        assertThat(c.responseBytes()).isEqualTo(200);
        assertThat(c.nanos(Stage.UPSTREAM_SEND) - arrival).isEqualTo(10_000);
        assertThat(c.nanos(Stage.UPSTREAM_HEADERS) - arrival).isEqualTo(1_010_000);
        assertThat(c.nanos(Stage.UPSTREAM_END) - arrival).isEqualTo(2_010_000);
        assertThat(c.nanos(Stage.RESPONSE_END) - arrival).isEqualTo(2_030_000);
        assertThat(c.nanos(Stage.FIRST_EVENT)).isZero();

        c.model = "other";
        assertThat(c.targetModel()).as("a field of its own").isEqualTo("gpt-4o");
        c.errorKind = ErrorKind.UPSTREAM_ERROR;
        assertThat(c.errorMessage()).as("a field of its own").isNull();

        c.noUpstream();
        assertThat(c.route()).isNull();
        assertThat(c.nanos(Stage.UPSTREAM_SEND)).isZero();
        assertThat(c.nanos(Stage.UPSTREAM_HEADERS)).isZero();
        assertThat(c.nanos(Stage.UPSTREAM_END)).isZero();
        assertThat(c.nanos(Stage.RESPONSE_END) - arrival).isEqualTo(2_030_000);
    }

    private static ChatRequest request(String model, boolean stream)
    {
        return new ChatRequest(model, List.of(), List.of(Message.text(Role.USER, "hi")), List.of(), null, null, null, null,
            stream, false, null, null, null);
    }
}
