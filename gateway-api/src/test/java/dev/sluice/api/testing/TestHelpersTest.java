package dev.sluice.api.testing;

import dev.sluice.api.ErrorKind;
import dev.sluice.api.GatewayException;
import dev.sluice.api.codec.RequestPeek;
import dev.sluice.api.config.ConfigException;
import dev.sluice.api.exchange.Completion;
import dev.sluice.api.exchange.Reply;
import dev.sluice.api.exchange.Stage;
import dev.sluice.api.model.ChatRequest;
import dev.sluice.api.model.Message;
import dev.sluice.api.model.Role;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

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
