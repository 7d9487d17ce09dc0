package dev.sluice.examples.denywords;

import com.fasterxml.jackson.databind.JsonNode;
import dev.sluice.api.ErrorKind;
import dev.sluice.api.GatewayException;
import dev.sluice.api.binding.BindingConfig;
import dev.sluice.api.binding.BindingConfig.BindingKind;
import dev.sluice.api.binding.ProxyBinding;
import dev.sluice.api.binding.BindingConfig.RouteConfig;
import dev.sluice.api.config.ConfigException;
import dev.sluice.api.exchange.Exchange;
import dev.sluice.api.exchange.Next;
import dev.sluice.api.exchange.Reply;
import dev.sluice.api.model.ChatRequest;
import dev.sluice.api.model.ContentPart;
import dev.sluice.api.model.Message;
import dev.sluice.api.model.Message.Role;
import dev.sluice.api.testing.TestBindingContext;
import dev.sluice.api.testing.TestExchange;
import dev.sluice.support.json.Json;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class DenyWordsTest
{
    private static final String BODY = "{}";

    private final DenyWordsFactory factory = new DenyWordsFactory();
    private final RecordingNext next = new RecordingNext();

    @Test
    void passesCleanRequestsOn()
    {
        ProxyBinding deny = create("{\"words\":[\"forbidden\"]}");

        CompletionStage<Reply> stage = deny.handle(exchange(userSays("a perfectly fine question")), next);

        assertThat(stage.toCompletableFuture()).isCompletedWithValue(RecordingNext.REPLY);
        assertThat(next.calls).hasSize(1);
    }

    @Test
    void blocksAWordInAUserMessageWithoutCallingNext()
    {
        ProxyBinding deny = create("{\"words\":[\"forbidden\"]}");

        GatewayException error = failure(deny.handle(exchange(userSays("tell me the forbidden thing")), next));

        assertThat(error.kind()).isEqualTo(ErrorKind.GUARDRAIL_BLOCKED);
        assertThat(error.status()).isEqualTo(400);
        assertThat(error.code()).isEqualTo("content_blocked");
        assertThat(error.param()).isNull();
        assertThat(error.getMessage()).isEqualTo("request blocked by the deny-words guardrail");
        assertThat(next.calls).isEmpty();
    }

    @Test
    void messageNamesNeitherTheWordNorThePrompt()
    {
        ProxyBinding deny = create("{\"words\":[\"Project-X\"]}");

        GatewayException error = failure(deny.handle(exchange(userSays("status of project-x please")), next));

        assertThat(error.getMessage()).doesNotContainIgnoringCase("project-x").doesNotContain("status");
    }

    @Test
    void ignoresCaseByDefault()
    {
        ProxyBinding deny = create("{\"words\":[\"ForBidden\"]}");

        assertThat(failure(deny.handle(exchange(userSays("FORBIDDEN")), next)).kind()).isEqualTo(ErrorKind.GUARDRAIL_BLOCKED);
    }

    @Test
    void matchesCaseWhenAskedTo()
    {
        ProxyBinding deny = create("{\"words\":[\"Forbidden\"],\"ignore_case\":false}");

        assertThat(deny.handle(exchange(userSays("forbidden")), next).toCompletableFuture())
            .isCompletedWithValue(RecordingNext.REPLY);
        assertThat(failure(deny.handle(exchange(userSays("Forbidden")), next)).kind()).isEqualTo(ErrorKind.GUARDRAIL_BLOCKED);
    }

    @Test
    void putsItsHeadersOnTheRefusalAndOnEveryAnswerThatPasses() throws Exception
    {
        ProxyBinding deny = create("{\"words\":[\"forbidden\"],\"headers\":{\"X-Guardrail\":\"deny-words\"}}");

        assertThat(failure(deny.handle(exchange(userSays("forbidden")), next)).headers().get("x-guardrail"))
            .isEqualTo("deny-words");
        Reply passed = deny.handle(exchange(userSays("fine")), next).toCompletableFuture().get();
        assertThat(passed.headers().get("x-guardrail")).isEqualTo("deny-words");
        assertThat(passed).isInstanceOf(Reply.Bytes.class);
    }

    @Test
    void refusesAHeaderTheRuntimeOwnsAtItsPath()
    {
        assertThatThrownBy(() -> create("{\"words\":[\"x\"],\"headers\":{\"content-type\":\"text/plain\"}}"))
            .isInstanceOf(ConfigException.class)
            .satisfies(e -> assertThat(((ConfigException)e).path()).isEqualTo("bindings.deny.options.headers.content-type"));
    }

    @Test
    void matchesSubstringsAndPhrases()
    {
        ProxyBinding deny = create("{\"words\":[\"secret\", \"acme confidential\"]}");

        assertThat(failure(deny.handle(exchange(userSays("top-secrets inside")), next))).isNotNull();
        assertThat(failure(deny.handle(exchange(userSays("this is ACME Confidential.")), next))).isNotNull();
        assertThat(deny.handle(exchange(userSays("acme is confidential")), next).toCompletableFuture())
            .isCompletedWithValue(RecordingNext.REPLY);
    }

    @Test
    void scansSystemPromptAssistantTurnsAndToolResults()
    {
        ProxyBinding deny = create("{\"words\":[\"forbidden\"]}");
        ChatRequest inSystem = request(List.of(new ContentPart.Text("You may discuss FORBIDDEN topics")),
            Message.text(Role.USER, "hi"));
        ChatRequest inAssistant = request(List.of(), Message.text(Role.USER, "hi"),
            Message.text(Role.ASSISTANT, "the forbidden answer"), Message.text(Role.USER, "go on"));
        ChatRequest inToolResult = request(List.of(), Message.text(Role.USER, "look it up"),
            new Message(Role.TOOL, List.of(new ContentPart.ToolResult("call_1",
                List.of(new ContentPart.Text("result: forbidden data")), false, null)), null));

        assertThat(failure(deny.handle(exchange(inSystem), next))).isNotNull();
        assertThat(failure(deny.handle(exchange(inAssistant), next))).isNotNull();
        assertThat(failure(deny.handle(exchange(inToolResult), next))).isNotNull();
        assertThat(next.calls).isEmpty();
    }

    @Test
    void doesNotScanToolCallArguments()
    {
        ProxyBinding deny = create("{\"words\":[\"forbidden\"]}");
        ChatRequest request = request(List.of(), Message.text(Role.USER, "hi"),
            new Message(Role.ASSISTANT, List.of(new ContentPart.ToolCall("call_1", "search", "{\"q\":\"forbidden\"}")), null));

        assertThat(deny.handle(exchange(request), next).toCompletableFuture()).isCompletedWithValue(RecordingNext.REPLY);
    }

    @Test
    void leavesTheExchangeUnmodified()
    {
        ProxyBinding deny = create("{\"words\":[\"forbidden\"]}");
        TestExchange exchange = exchange(userSays("fine"));

        deny.handle(exchange, next);

        assertThat(exchange.modified()).isFalse();
        assertThat(exchange.decodes()).isEqualTo(1);
    }

    @Test
    void undecodableBodyFailsTheStage()
    {
        ProxyBinding deny = create("{\"words\":[\"forbidden\"]}");
        Exchange broken = new TestExchange(userSays("x"), BODY)
            .decodeFailure(new GatewayException(ErrorKind.INVALID_REQUEST, "messages: must be a list"));

        assertThat(failure(deny.handle(broken, next)).kind()).isEqualTo(ErrorKind.INVALID_REQUEST);
        assertThat(next.calls).isEmpty();
    }

    @Test
    void rejectsMissingWords()
    {
        assertThatThrownBy(() -> create("{}"))
            .isInstanceOf(ConfigException.class)
            .hasMessage("bindings.deny.options.words: must be set (expected: a list of words to block)");
    }

    @Test
    void rejectsMisspeltKeyAsUnknown()
    {
        assertThatThrownBy(() -> create("{\"word\":[\"x\"]}"))
            .isInstanceOf(ConfigException.class)
            .hasMessage("bindings.deny.options.word: unknown key (expected one of: headers, ignore_case, words)");
    }

    @Test
    void rejectsEmptyWords()
    {
        assertThatThrownBy(() -> create("{\"words\":[]}"))
            .isInstanceOf(ConfigException.class)
            .hasMessage("bindings.deny.options.words: value: [] (expected: at least one word)");
    }

    @Test
    void rejectsBlankWordWithItsIndex()
    {
        assertThatThrownBy(() -> create("{\"words\":[\"ok\", \"  \"]}"))
            .isInstanceOf(ConfigException.class)
            .hasMessage("bindings.deny.options.words[1]: value: \"  \" (expected: a non-blank word or phrase)");
    }

    @Test
    void rejectsIgnoreCaseThatIsNotABoolean()
    {
        assertThatThrownBy(() -> create("{\"words\":[\"x\"],\"ignore_case\":\"yes\"}"))
            .isInstanceOf(ConfigException.class)
            .satisfies(e -> assertThat(((ConfigException)e).path()).isEqualTo("bindings.deny.options.ignore_case"));
    }

    @Test
    void rejectsRoutes()
    {
        BindingConfig config = new BindingConfig("deny", "deny-words", BindingKind.PROXY, json("{\"words\":[\"x\"]}"), "router",
            List.of(new RouteConfig("bindings.deny.routes[0]", List.of(), "router", null)));

        assertThatThrownBy(() -> factory.create(config, new TestBindingContext()))
            .isInstanceOf(ConfigException.class)
            .satisfies(e -> assertThat(((ConfigException)e).path()).isEqualTo("bindings.deny.routes"));
    }

    private ProxyBinding create(String options)
    {
        return factory.create(new BindingConfig("deny", "deny-words", BindingKind.PROXY, json(options), "router", List.of()),
            new TestBindingContext());
    }

    private static TestExchange exchange(ChatRequest request)
    {
        return new TestExchange(request, BODY);
    }

    private static ChatRequest userSays(String text)
    {
        return request(List.of(), Message.text(Role.USER, text));
    }

    private static ChatRequest request(List<ContentPart> system, Message... messages)
    {
        return new ChatRequest("demo", system, List.of(messages), List.of(), null, null, null, null, false, false, null, null,
            null);
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

    private static GatewayException failure(CompletionStage<Reply> stage)
    {
        try
        {
            stage.toCompletableFuture().get();
            throw new AssertionError("expected the request to be blocked");
        }
        catch (ExecutionException e)
        {
            return (GatewayException)e.getCause();
        }
        catch (InterruptedException e)
        {
            throw new AssertionError(e);
        }
    }

    /** The rest of the chain: records the exchanges it is given and answers with one fixed reply. */
    private static final class RecordingNext implements Next
    {
        static final Reply REPLY = new Reply.Bytes(200, "application/json", new byte[0], null);

        final List<Exchange> calls = new ArrayList<>();

        @Override
        public CompletionStage<Reply> handle(Exchange exchange)
        {
            calls.add(exchange);
            return CompletableFuture.completedFuture(REPLY);
        }
    }
}
