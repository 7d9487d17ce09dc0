package dev.sluice.plugin.gemini;

import com.fasterxml.jackson.databind.node.BooleanNode;
import dev.sluice.api.testing.TestBody;
import dev.sluice.api.ErrorKind;
import dev.sluice.api.GatewayException;
import dev.sluice.api.exchange.EventStream;
import dev.sluice.api.exchange.Reply;
import dev.sluice.api.model.ChatRequest;
import dev.sluice.api.model.ContentPart;
import dev.sluice.api.model.Message;
import dev.sluice.api.model.RawFrame;
import dev.sluice.api.model.Message.Role;
import dev.sluice.api.model.ChatResponse.StopReason;
import dev.sluice.api.model.StreamEvent;
import dev.sluice.api.model.StreamItem;
import dev.sluice.api.model.Usage;
import dev.sluice.api.testing.TestExchange;
import dev.sluice.api.upstream.UpstreamRequest;
import dev.sluice.support.dialect.UpstreamErrors;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletionException;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

class GeminiClientTest
{
    private static GeminiClientOptions options(List<String> droppable)
    {
        return new GeminiClientOptions(GeminiClientOptions.GOOGLE_URL, "AIza-gateway", null, List.of("x-request-id"),
            droppable, null, false);
    }

    private static ChatRequest request(String model, boolean stream, List<Message> messages)
    {
        return new ChatRequest(model, List.of(), messages, List.of(), null, null, null, null, stream, stream, null,
            null, null);
    }

    private static Reply handle(GeminiClient client, TestExchange exchange)
    {
        return client.handle(exchange).toCompletableFuture().join();
    }

    @Test
    void forwardsAGeminiClientsBytesWithTheTargetModelInThePathAndOnlyTheGatewaysKey()
    {
        byte[] answer = Fixtures.bytes("response-text.json");
        TestUpstream upstream = new TestUpstream(200, TestBody.split(answer, 100));
        GeminiClient client = new GeminiClient(options(List.of()), upstream);
        String body = new String(Fixtures.bytes("request-tools.json"), StandardCharsets.UTF_8);
        TestExchange exchange = new TestExchange(request("gemini-2.5-flash", false, List.of()), body).dialect("gemini")
            .header("x-goog-api-key", "AIza-client").header("x-request-id", "r-1").header("Cookie", "a=b");
        exchange.targetModel("gemini-2.5-pro");

        Reply reply = handle(client, exchange);

        UpstreamRequest sent = upstream.sent.get(0);
        assertThat(sent.method()).isEqualTo("POST");
        assertThat(sent.path()).isEqualTo("/models/gemini-2.5-pro:generateContent");
        assertThat(sent.body()).as("forwarded untouched: the model is in the path").isSameAs(exchange.body());
        assertThat(upstream.header("x-goog-api-key")).isEqualTo("AIza-gateway");
        assertThat(upstream.header("x-request-id")).isEqualTo("r-1");
        assertThat(upstream.header("Cookie")).isNull();
        assertThat(upstream.header("Accept")).isEqualTo("application/json");
        assertThat(sent.headers()).hasSize(3);
        assertThat(exchange.decodes()).as("the fast path never decodes").isZero();

        Reply.Bytes bytes = (Reply.Bytes)reply;
        assertThat(bytes.body()).isEqualTo(answer);
        assertThat(bytes.usage()).isEqualTo(new Usage(87, 145, 64, 0, 128));
        assertThat(exchange.usage()).isEqualTo(bytes.usage());
    }

    @Test
    void relaysAGeminiStreamRawAndLearnsTheFinalUsage()
    {
        byte[] sse = Fixtures.bytes("stream-text.sse");
        TestBody body = TestBody.split(sse, 41);
        TestUpstream upstream = new TestUpstream(200, body);
        TestExchange exchange = new TestExchange(request("models/gemini-2.5-flash", true, List.of()),
            "{\"contents\":[]}").dialect("gemini");

        Reply reply = handle(new GeminiClient(options(List.of()), upstream), exchange);

        assertThat(upstream.sent.get(0).path()).isEqualTo("/models/gemini-2.5-flash:streamGenerateContent?alt=sse");
        assertThat(upstream.header("Accept")).isEqualTo("text/event-stream");
        List<StreamItem> items = drain(((Reply.Stream)reply).events());
        ByteArrayOutputStream relayed = new ByteArrayOutputStream();
        items.stream().filter(RawFrame.class::isInstance)
            .forEach(i -> relayed.writeBytes(Fixtures.utf8(Fixtures.string(((RawFrame)i).bytes()))));
        assertThat(relayed.toByteArray()).isEqualTo(sse);
        assertThat(items.get(items.size() - 1)).isSameAs(StreamItem.END);
        assertThat(exchange.usage()).isEqualTo(new Usage(87, 145, 0, 0, 128));
        body.assertAllReleasedOnce();
    }

    @Test
    void translatesARequestFromAnotherDialectAndDecodesTheAnswer()
    {
        TestUpstream upstream = new TestUpstream(200, TestBody.of(Fixtures.bytes("response-tools.json")));
        ChatRequest openAi = request("gpt-4o", false, List.of(
            new Message(Role.ASSISTANT, List.of(new ContentPart.Thinking("hmm", null),
                new ContentPart.ToolCall("call_1", "f", "{\"a\":1}")), null),
            new Message(Role.TOOL, List.of(new ContentPart.ToolResult("call_1", List.of(new ContentPart.Text("ok")),
                false, null)), null)));
        TestExchange exchange = new TestExchange(openAi, "{\"model\":\"gpt-4o\"}");
        exchange.targetModel("gemini-3-pro-preview");

        Reply reply = handle(new GeminiClient(options(List.of()), upstream), exchange);

        assertThat(upstream.sent.get(0).path()).isEqualTo("/models/gemini-3-pro-preview:generateContent");
        Fixtures.assertSameJson(upstream.sent.get(0).body(), Fixtures.utf8("""
            {"contents":[{"role":"model","parts":[
                {"functionCall":{"name":"f","args":{"a":1}},"thoughtSignature":"skip_thought_signature_validator"}]},
              {"role":"user","parts":[{"functionResponse":{"name":"f","response":{"result":"ok"}}}]}]}"""));
        Reply.Message message = (Reply.Message)reply;
        assertThat(message.response().stopReason()).isEqualTo(StopReason.TOOL_USE);
        assertThat(exchange.usage()).isEqualTo(new Usage(112, 168, 0, 0, 117));
    }

    @Test
    void translatesAStreamFromAnotherDialectIntoCanonicalEvents()
    {
        byte[] sse = Fixtures.bytes("stream-tools.sse");
        TestUpstream upstream = new TestUpstream(200, TestBody.split(sse, 64));
        ChatRequest anthropic = request("gemini-3-pro-preview", true, List.of(Message.text(Role.USER, "hi")));
        TestExchange exchange = new TestExchange(anthropic, "{\"model\":\"gemini-3-pro-preview\",\"stream\":true}")
            .dialect("anthropic");

        Reply reply = handle(new GeminiClient(options(List.of()), upstream), exchange);

        assertThat(upstream.sent.get(0).path()).isEqualTo("/models/gemini-3-pro-preview:streamGenerateContent?alt=sse");
        List<StreamItem> items = drain(((Reply.Stream)reply).events());
        List<StreamEvent> events = new ArrayList<>();
        items.subList(0, items.size() - 1).forEach(i -> events.add((StreamEvent)i));
        assertThat(events).isEqualTo(Fixtures.decodeStream(sse, sse.length, null));
        assertThat(items.get(items.size() - 1)).isSameAs(StreamItem.END);
        assertThat(exchange.usage()).isEqualTo(new Usage(112, 168, 0, 0, 117));
    }

    @Test
    void refusesAnotherDialectsFieldsUnlessTheOperatorAllowsDroppingThem()
    {
        ChatRequest withStore = new ChatRequest("gpt-4o", List.of(), List.of(Message.text(Role.USER, "hi")), List.of(),
            null, null, null, null, false, false, null, null, Map.of("store", BooleanNode.TRUE));
        String body = "{\"model\":\"gpt-4o\"}";

        TestUpstream refused = new TestUpstream(200, TestBody.of(Fixtures.bytes("response-text.json")));
        CompletionException e = catchThrowableOfType(CompletionException.class,
            () -> handle(new GeminiClient(options(List.of()), refused), new TestExchange(withStore, body)));
        GatewayException cause = GatewayException.of(e);
        assertThat(cause.kind()).isEqualTo(ErrorKind.UNSUPPORTED);
        assertThat(cause.getMessage()).isEqualTo("store: is a field of the openai dialect that cannot be translated to gemini"
            + " (an operator can allow dropping it: drop_unsupported)");
        assertThat(refused.sent).as("nothing reaches the upstream").isEmpty();

        TestUpstream allowed = new TestUpstream(200, TestBody.of(Fixtures.bytes("response-text.json")));
        handle(new GeminiClient(options(List.of("store")), allowed), new TestExchange(withStore, body));
        assertThat(Fixtures.tree(allowed.sent.get(0).body()).has("store")).isFalse();
    }

    @Test
    void reEncodesAModifiedGeminiRequestButStillRelaysTheAnswer()
    {
        byte[] answer = Fixtures.bytes("response-text.json");
        TestUpstream upstream = new TestUpstream(200, TestBody.of(answer));
        TestExchange exchange = new TestExchange(request("gemini-2.5-flash", false, List.of()), "{\"contents\":[]}")
            .dialect("gemini");
        exchange.request(request("gemini-2.5-flash", false, List.of(Message.text(Role.USER, "[redacted]"))));

        Reply reply = handle(new GeminiClient(options(List.of()), upstream), exchange);

        Fixtures.assertSameJson(upstream.sent.get(0).body(),
            Fixtures.utf8("{\"contents\":[{\"role\":\"user\",\"parts\":[{\"text\":\"[redacted]\"}]}]}"));
        assertThat(((Reply.Bytes)reply).body()).isEqualTo(answer);
    }

    @Test
    void mapsAnErrorAnswer()
    {
        TestBody body = TestBody.of(Fixtures.utf8("{\"error\":{\"code\":429,"
            + "\"message\":\"Resource has been exhausted\",\"status\":\"RESOURCE_EXHAUSTED\"}}"));
        TestExchange exchange = new TestExchange(request("gemini-2.5-flash", false, List.of()), "{}").dialect("gemini");

        CompletionException e = catchThrowableOfType(CompletionException.class,
            () -> handle(new GeminiClient(options(List.of()), new TestUpstream(429, body)), exchange));

        GatewayException cause = GatewayException.of(e);
        assertThat(cause.kind()).isEqualTo(ErrorKind.RATE_LIMITED);
        assertThat(cause.status()).isEqualTo(429);
        assertThat(cause.getMessage()).isEqualTo("upstream: Resource has been exhausted");
    }

    @Test
    void encodesTheModelAsOnePathSegment()
    {
        assertThat(GeminiClient.path("gemini-2.5-flash", false)).isEqualTo("/models/gemini-2.5-flash:generateContent");
        assertThat(GeminiClient.path("tunedModels/x y", true))
            .isEqualTo("/tunedModels/x%20y:streamGenerateContent?alt=sse");
        assertThat(GeminiClient.path("models/a/b", false)).isEqualTo("/models/a%2Fb:generateContent");
        assertThat(GeminiModelNames.encodeSegment("café:1@2?")).isEqualTo("caf%C3%A9%3A1%402%3F");
        assertThat(GeminiModelNames.encodeSegment("a-b.c_d~e")).isEqualTo("a-b.c_d~e");
    }

    @Test
    void sendsNoKeyWhenNoneIsConfigured()
    {
        TestUpstream upstream = new TestUpstream(200, TestBody.of(Fixtures.bytes("response-text.json")));
        GeminiClientOptions noKey = new GeminiClientOptions("http://127.0.0.1:9/v1beta", " ", null, null, null, null, false);
        GeminiClient client = new GeminiClient(noKey, upstream);
        handle(client, new TestExchange(request("m", false, List.of()), "{}").dialect("gemini"));
        assertThat(upstream.header("x-goog-api-key")).isNull();
    }

    @Test
    void aPoolOfKeysTakesTurnsAndAKeyGeminiRejectsWithA400RestsWhileTheOtherServes()
    {
        byte[] rejected = Fixtures.utf8("""
            {"error":{"code":400,"message":"API key not valid. Please pass a valid API key.","status":"INVALID_ARGUMENT",
              "details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"API_KEY_INVALID"}]}}""");
        byte[] answer = Fixtures.bytes("response-text.json");
        TestUpstream turns = new TestUpstream(key -> new TestUpstream.Answer(200, TestBody.of(answer)));
        GeminiClient pooled = new GeminiClient(pool("AIza-1", "AIza-2", "AIza-3"), turns);
        for (int i = 0; i < 4; i++)
            handle(pooled, geminiExchange());
        assertThat(sentKeys(turns)).containsExactly("AIza-1", "AIza-2", "AIza-3", "AIza-1");

        TestUpstream upstream = new TestUpstream(key -> key.equals("AIza-revoked")
            ? new TestUpstream.Answer(400, TestBody.of(rejected)) : new TestUpstream.Answer(200, TestBody.of(answer)));
        GeminiClient client = new GeminiClient(pool("AIza-revoked", "AIza-good"), upstream);

        CompletionException e = catchThrowableOfType(CompletionException.class, () -> handle(client, geminiExchange()));
        assertThat(GatewayException.of(e).getMessage()).isEqualTo(UpstreamErrors.CREDENTIALS_REJECTED);
        for (int i = 0; i < 5; i++)
            assertThat(handle(client, geminiExchange())).isInstanceOf(Reply.Bytes.class);
        assertThat(sentKeys(upstream)).as("the rejected key rests for a minute")
            .containsExactly("AIza-revoked", "AIza-good", "AIza-good", "AIza-good", "AIza-good", "AIza-good");
    }

    @Test
    void aKeyAnswered429RestsWhileTheOtherServes()
    {
        byte[] exhausted = Fixtures.utf8("""
            {"error":{"code":429,"message":"Resource has been exhausted","status":"RESOURCE_EXHAUSTED",
              "details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"30s"}]}}""");
        byte[] answer = Fixtures.bytes("response-text.json");
        TestUpstream upstream = new TestUpstream(key -> key.equals("AIza-busy")
            ? new TestUpstream.Answer(429, TestBody.of(exhausted)) : new TestUpstream.Answer(200, TestBody.of(answer)));
        GeminiClient client = new GeminiClient(pool("AIza-busy", "AIza-idle"), upstream);

        CompletionException e = catchThrowableOfType(CompletionException.class, () -> handle(client, geminiExchange()));
        assertThat(GatewayException.of(e).status()).isEqualTo(429);
        assertThat(GatewayException.of(e).headers().get("retry-after")).isEqualTo("30");
        for (int i = 0; i < 4; i++)
            handle(client, geminiExchange());
        assertThat(sentKeys(upstream)).containsExactly("AIza-busy", "AIza-idle", "AIza-idle", "AIza-idle", "AIza-idle");
    }

    private static GeminiClientOptions pool(String... keys)
    {
        return new GeminiClientOptions(GeminiClientOptions.GOOGLE_URL, null, List.of(keys), null, null, null, false);
    }

    private static TestExchange geminiExchange()
    {
        return new TestExchange(request("gemini-2.5-flash", false, List.of()), "{\"contents\":[]}").dialect("gemini");
    }

    private static List<String> sentKeys(TestUpstream upstream)
    {
        return upstream.sent.stream().map(request -> TestUpstream.header(request, "x-goog-api-key")).toList();
    }

    /** Reads until a terminal item; the test bodies make everything available at once. */
    static List<StreamItem> drain(EventStream stream)
    {
        List<StreamItem> items = new ArrayList<>();
        for (int guard = 0; guard < 100_000; guard++)
        {
            StreamItem item = stream.read();
            if (item == null)
                throw new AssertionError("stream stalled");
            items.add(item);
            if (item == StreamItem.END || item instanceof StreamEvent.Error)
                return items;
        }
        throw new AssertionError("stream did not end");
    }
}
