package dev.sluice.plugin.mock;

import com.fasterxml.jackson.databind.JsonNode;
import dev.sluice.api.ErrorKind;
import dev.sluice.api.GatewayException;
import dev.sluice.api.binding.BindingConfig;
import dev.sluice.api.binding.BindingKind;
import dev.sluice.api.binding.ClientBinding;
import dev.sluice.api.config.ConfigException;
import dev.sluice.api.exchange.EventStream;
import dev.sluice.api.exchange.Exchange;
import dev.sluice.api.exchange.Reply;
import dev.sluice.api.json.Json;
import dev.sluice.api.model.ChatRequest;
import dev.sluice.api.model.ChatResponse;
import dev.sluice.api.model.ContentPart;
import dev.sluice.api.model.Message;
import dev.sluice.api.model.Role;
import dev.sluice.api.model.StopReason;
import dev.sluice.api.model.StreamEvent;
import dev.sluice.api.model.StreamItem;
import dev.sluice.api.model.Usage;
import dev.sluice.api.testing.TestBindingContext;
import dev.sluice.api.testing.TestExchange;
import org.junit.jupiter.api.Test;

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
            .hasMessage("bindings.south_mock.options.txt: unknown key (expected one of: echo, text)");
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

    private ClientBinding create(String options)
    {
        BindingConfig config = new BindingConfig("south_mock", "mock", BindingKind.CLIENT, json(options), null, List.of());
        return factory.create(config, new TestBindingContext());
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
