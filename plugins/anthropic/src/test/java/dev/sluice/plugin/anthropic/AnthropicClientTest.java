package dev.sluice.plugin.anthropic;

import com.fasterxml.jackson.databind.JsonNode;
import dev.sluice.api.testing.TestBody;
import dev.sluice.api.ErrorKind;
import dev.sluice.api.GatewayException;
import dev.sluice.api.binding.BindingConfig;
import dev.sluice.api.binding.BindingContext;
import dev.sluice.api.binding.BindingConfig.BindingKind;
import dev.sluice.api.binding.ClientBinding;
import dev.sluice.api.exchange.EventStream;
import dev.sluice.api.exchange.Exchange;
import dev.sluice.api.exchange.Next;
import dev.sluice.api.exchange.Reply;
import dev.sluice.api.model.ChatRequest;
import dev.sluice.api.model.ContentPart;
import dev.sluice.api.model.Message;
import dev.sluice.api.model.RawFrame;
import dev.sluice.api.model.RetainedFrame;
import dev.sluice.api.model.Message.Role;
import dev.sluice.api.model.ChatRequest.Sampling;
import dev.sluice.api.model.StreamEvent;
import dev.sluice.api.model.StreamItem;
import dev.sluice.api.model.Usage;
import dev.sluice.api.testing.TestExchange;
import dev.sluice.api.upstream.Upstream;
import dev.sluice.api.upstream.UpstreamOptions;
import dev.sluice.api.upstream.UpstreamRequest;
import dev.sluice.api.upstream.UpstreamResponse;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/** {@link AnthropicClient} against a scripted upstream: what goes up, and what comes back down. */
class AnthropicClientTest
{
    private static final String MODEL = "claude-sonnet-4-5";
    private static final String BODY = "{\"model\":\"claude-sonnet-4-5\",\"max_tokens\":256,"
        + "\"messages\":[{\"role\":\"user\",\"content\":\"Where is parcel 7731?\"}]}";
    private static final String STREAM_BODY = "{\"model\":\"claude-sonnet-4-5\",\"max_tokens\":256,\"stream\":true,"
        + "\"messages\":[{\"role\":\"user\",\"content\":\"Where is parcel 7731?\"}]}";

    private final ScriptedUpstream upstream = new ScriptedUpstream();

    @AfterEach
    void everyChunkReleasedExactlyOnce()
    {
        if (upstream.response != null)
            upstream.response.body.assertAllReleasedOnce();
    }

    private ClientBinding client(String options)
    {
        BindingConfig config = new BindingConfig("south", "anthropic", BindingKind.CLIENT, Fixtures.tree(options),
            null, List.of());
        return new AnthropicClientFactory().create(config, upstream);
    }

    private ClientBinding client()
    {
        return client("{\"url\":\"https://api.anthropic.com/v1\",\"api_key\":\"sk-ant-gateway\"}");
    }

    private static ChatRequest canonical(boolean stream)
    {
        return new ChatRequest(MODEL, List.of(), List.of(Message.text(Role.USER, "Where is parcel 7731?")), List.of(),
            null, null,
            new Sampling(null, null, null, 256, null, null, null, null), null, stream, stream, null, null, null);
    }

    private static TestExchange anthropicExchange(boolean stream)
    {
        return new TestExchange(canonical(stream), stream ? STREAM_BODY : BODY).dialect("anthropic")
            .header("x-api-key", "sk-ant-client-own-key")
            .header("Authorization", "Bearer client-token")
            .header("anthropic-version", "2023-06-01")
            .header("anthropic-beta", "prompt-caching-2024-07-31")
            .header("x-request-id", "r-1");
    }

    private static Reply reply(CompletionStage<Reply> stage)
    {
        return stage.toCompletableFuture().join();
    }

    private static GatewayException failure(CompletionStage<Reply> stage)
    {
        CompletionException e = catchThrowableOfType(CompletionException.class, () ->
            stage.toCompletableFuture().join());
        assertThat(e).as("the stage failed").isNotNull();
        return (GatewayException)e.getCause();
    }

    @Test
    void forwardsAnAnthropicClientsBytesUntouchedWithTheGatewaysCredentials()
    {
        byte[] answer = Fixtures.bytes("response-tool-use.json");
        upstream.answer(200, answer);
        TestExchange exchange = anthropicExchange(false);

        Reply.Bytes bytes = (Reply.Bytes)reply(client().handle(exchange));

        UpstreamRequest sent = upstream.sent.get(0);
        assertThat(sent.method()).isEqualTo("POST");
        assertThat(sent.path()).isEqualTo("/messages");
        assertThat(sent.body()).isEqualTo(Fixtures.utf8(BODY));
        assertThat(sent.headers()).containsExactly(Map.entry("x-api-key", "sk-ant-gateway"),
            Map.entry("anthropic-version", "2023-06-01"), Map.entry("Accept", "application/json"),
            Map.entry("anthropic-beta", "prompt-caching-2024-07-31"));
        assertThat(bytes.body()).isEqualTo(answer);
        assertThat(bytes.status()).isEqualTo(200);
        assertThat(bytes.usage()).isEqualTo(new Usage(4672, 89, 3000, 1200, 12));
        assertThat(exchange.usage()).isEqualTo(bytes.usage());
        assertThat(exchange.decodes()).as("the fast path never decodes").isZero();
    }

    @Test
    void splicesARoutesModelAliasIntoTheRawBody()
    {
        upstream.answer(200, Fixtures.bytes("response-tool-use.json"));
        TestExchange exchange = anthropicExchange(false);
        exchange.targetModel("claude-sonnet-4-5-20250929");

        reply(client().handle(exchange));

        assertThat(new String(upstream.sent.get(0).body(), StandardCharsets.UTF_8))
            .isEqualTo(BODY.replace("\"claude-sonnet-4-5\"", "\"claude-sonnet-4-5-20250929\""));
        assertThat(exchange.decodes()).isZero();
    }

    @Test
    void aModifiedAnthropicRequestIsReencodedButTheAnswerIsStillRelayed()
    {
        byte[] answer = Fixtures.bytes("response-tool-use.json");
        upstream.answer(200, answer);
        TestExchange exchange = anthropicExchange(false);
        exchange.request(new ChatRequest(MODEL, List.of(new ContentPart.Text("Be brief.")),
            List.of(Message.text(Role.USER, "Where is parcel 7731?")), List.of(), null, null,
            new Sampling(null, null, null, 256, null, null, null, null), null, false, false, null, null,
            Map.of("thinking", Fixtures.tree("{\"type\":\"enabled\",\"budget_tokens\":1024}"))));

        Reply.Bytes bytes = (Reply.Bytes)reply(client().handle(exchange));

        Fixtures.assertExactJson(upstream.sent.get(0).body(),
            Fixtures.utf8("{\"model\":\"claude-sonnet-4-5\",\"max_tokens\":256,"
            + "\"system\":\"Be brief.\",\"messages\":[{\"role\":\"user\",\"content\":\"Where is parcel 7731?\"}],"
            + "\"thinking\":{\"type\":\"enabled\",\"budget_tokens\":1024}}"));
        assertThat(bytes.body()).isEqualTo(answer);
    }

    @Test
    void translatesAnOpenAiRequestWithTheBindingsDefaultMaxTokensAndDecodesTheAnswer()
    {
        upstream.answer(200, Fixtures.bytes("response-tool-use.json"));
        ChatRequest request = new ChatRequest("claude", List.of(), List.of(Message.text(Role.USER, "Hi")), List.of(),
            null, null,
            null, null, false, false, null, null, null);
        TestExchange exchange = new TestExchange(request, "{\"model\":\"claude\",\"messages\":[]}")
            .header("Authorization", "Bearer client-token").header("anthropic-beta", "x");
        exchange.targetModel("claude-sonnet-4-5");

        Reply.Message message = (Reply.Message)reply(client("{\"url\":\"http://127.0.0.1:9/v1\","
            + "\"default_max_tokens\":2048,"
            + "\"forward_headers\":[]}").handle(exchange));

        JsonNode sent = Fixtures.tree(upstream.sent.get(0).body());
        assertThat(sent).isEqualTo(Fixtures.tree("{\"model\":\"claude-sonnet-4-5\",\"max_tokens\":2048,"
            + "\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]}"));
        assertThat(upstream.sent.get(0).headers()).containsExactly(Map.entry("anthropic-version", "2023-06-01"),
            Map.entry("Accept", "application/json"));
        assertThat(message.response().id()).isEqualTo("msg_01Aq9w938a90dw8q");
        assertThat(exchange.usage()).isEqualTo(new Usage(4672, 89, 3000, 1200, 12));
    }

    @Test
    void refusesAnotherDialectsFieldsUnlessTheOperatorLetsThemDrop()
    {
        ChatRequest request = new ChatRequest("claude", List.of(), List.of(new Message(Role.USER,
            List.of(new ContentPart.Text("Hi")), "dispatcher_7")), List.of(), null, null,
            new Sampling(null, null, null, null, null, null, null, 42L), null, false, false, null,
            Map.of("tenant", "acme"),
            Map.of("store", Fixtures.tree("true")));
        TestExchange exchange = new TestExchange(request, "{\"model\":\"claude\",\"messages\":[]}");

        GatewayException refused = failure(client().handle(exchange));
        assertThat(refused.kind()).isEqualTo(ErrorKind.UNSUPPORTED);
        assertThat(refused.getMessage()).isEqualTo("store: is a field of the openai dialect that cannot be translated to anthropic"
            + " (an operator can allow dropping it: drop_unsupported)");
        assertThat(upstream.sent).as("no upstream call").isEmpty();

        ClientBinding dropsStore = client("{\"url\":\"http://x/v1\",\"drop_unsupported\":[\"store\"]}");
        GatewayException name = failure(dropsStore.handle(exchange));
        assertThat(name.param()).isEqualTo("messages[0].name");
        GatewayException seed = failure(client("{\"url\":\"http://x/v1\",\"drop_unsupported\":[\"store\",\"name\"]}")
            .handle(exchange));
        assertThat(seed.param()).isEqualTo("seed");

        upstream.answer(200, Fixtures.bytes("response-tool-use.json"));
        ClientBinding dropsAll = client("{\"url\":\"http://x/v1\","
            + "\"drop_unsupported\":[\"store\",\"seed\",\"metadata\",\"name\"]}");
        reply(dropsAll.handle(exchange));
        assertThat(Fixtures.tree(upstream.sent.get(0).body())).isEqualTo(Fixtures.tree("{\"model\":\"claude\","
            + "\"max_tokens\":4096,"
            + "\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]}"));
    }

    @Test
    void mapsAnUpstreamErrorAnswer()
    {
        upstream.answer(529,
            Fixtures.utf8("{\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}"));

        GatewayException e = failure(client().handle(anthropicExchange(false)));

        assertThat(e.kind()).isEqualTo(ErrorKind.UNAVAILABLE);
        assertThat(e.status()).isEqualTo(529);
        assertThat(e.getMessage()).isEqualTo("upstream: Overloaded");
    }

    @Test
    void relaysAnAnthropicStreamRawAndRecordsItsUsage()
    {
        byte[] sse = Fixtures.bytes("stream-tool-use.sse");
        upstream.answer(200, split(sse, 97));
        TestExchange exchange = anthropicExchange(true);

        List<StreamItem> items = drain(((Reply.Stream)reply(client().handle(exchange))).events());

        assertThat(upstream.sent.get(0).headers()).contains(Map.entry("Accept", "text/event-stream"));
        ByteArrayOutputStream relayed = new ByteArrayOutputStream();
        items.stream().filter(RawFrame.class::isInstance).forEach(i ->
            relayed.writeBytes(Fixtures.bytes(((RawFrame)i).bytes())));
        assertThat(relayed.toByteArray()).isEqualTo(sse);
        assertThat(items.get(items.size() - 1)).isSameAs(StreamItem.END);
        assertThat(exchange.usage()).isEqualTo(new Usage(1401, 65, 1024, 0, 0));
        assertThat(upstream.response.body.failure()).isNull();
    }

    @Test
    void aRawStreamLendsEachChunkOfWholeEventsToAConsumerThatTakesThem()
    {
        byte[] sse = Fixtures.bytes("stream-tool-use.sse");
        // One event per chunk, as a provider that flushes per event sends them: every chunk ends on a boundary.
        List<byte[]> events = new ArrayList<>();
        for (String event : Fixtures.string("stream-tool-use.sse").split("(?<=\n\n)"))
            events.add(Fixtures.utf8(event));
        upstream.answer(200, events.toArray(new byte[0][]));
        TestExchange exchange = anthropicExchange(true);
        EventStream stream = ((Reply.Stream)reply(client().handle(exchange))).events();
        assertThat(stream.acceptRetainedFrames()).isTrue();

        ByteArrayOutputStream relayed = new ByteArrayOutputStream();
        int lent = 0;
        StreamItem item;
        while ((item = stream.read()) instanceof RetainedFrame frame)
        {
            assertThat(frame.bytes()).as("the chunk's own buffer").isSameAs(upstream.response.body.buffer(lent++));
            relayed.writeBytes(Fixtures.bytes(frame.bytes()));
            frame.release();
        }

        assertThat(item).isSameAs(StreamItem.END);
        assertThat(lent).isEqualTo(events.size());
        assertThat(relayed.toByteArray()).isEqualTo(sse);
        assertThat(exchange.usage()).isEqualTo(new Usage(1401, 65, 1024, 0, 0));
    }

    @Test
    void aRawStreamWithholdsAnErrorEventAndEndsWithItAsTheTerminalError()
    {
        byte[] sse = Fixtures.bytes("stream-error.sse");
        upstream.answer(200, sse, Fixtures.utf8("never read"));

        List<StreamItem> items = drain(((Reply.Stream)reply(client().handle(anthropicExchange(true)))).events());

        String errorEvent = "event: error\n";
        String before = new String(sse, StandardCharsets.UTF_8);
        before = before.substring(0, before.indexOf(errorEvent));
        assertThat(items).hasSize(2);
        assertThat(Fixtures.string(((RawFrame)items.get(0)).bytes())).isEqualTo(before);
        GatewayException e = ((StreamEvent.Error)items.get(1)).error();
        assertThat(e.kind()).isEqualTo(ErrorKind.UNAVAILABLE);
        assertThat(e.getMessage()).isEqualTo("upstream: Overloaded");
        assertThat(upstream.response.body.failure()).as("the upstream is aborted").isNotNull();
    }

    @Test
    void aRawStreamCutBeforeMessageStopEndsWithAnError()
    {
        String sse = Fixtures.string("stream-tool-use.sse");
        upstream.answer(200, split(Fixtures.utf8(sse.substring(0, sse.indexOf("event: message_stop"))), 64));
        TestExchange exchange = anthropicExchange(true);

        List<StreamItem> items = drain(((Reply.Stream)reply(client().handle(exchange))).events());

        GatewayException e = ((StreamEvent.Error)items.get(items.size() - 1)).error();
        assertThat(e.kind()).isEqualTo(ErrorKind.UPSTREAM_UNAVAILABLE);
        assertThat(e.getMessage()).isEqualTo("upstream stream ended before completion");
        assertThat(exchange.usage()).as("usage seen before the cut still counts").isEqualTo(new Usage(1401, 65, 1024,
            0, 0));
    }

    @Test
    void translatesTheStreamForAClientOfAnotherDialect()
    {
        byte[] sse = Fixtures.bytes("stream-thinking.sse");
        upstream.answer(200, split(sse, 33));
        TestExchange exchange = new TestExchange(canonical(true), "{\"model\":\"claude-sonnet-4-5\",\"stream\":true}");

        List<StreamItem> items = drain(((Reply.Stream)reply(client().handle(exchange))).events());

        assertThat(items.get(items.size() - 1)).isSameAs(StreamItem.END);
        assertThat(items.subList(0, items.size() - 1)).isEqualTo(Fixtures.decodeStream(sse, sse.length, null));
        assertThat(exchange.usage()).isEqualTo(new Usage(28, 106, 0, 0, 67));
        assertThat(Fixtures.tree(upstream.sent.get(0).body()).get("stream").booleanValue()).isTrue();
    }

    private static byte[][] split(byte[] bytes, int size)
    {
        List<byte[]> parts = new ArrayList<>();
        for (int i = 0; i < bytes.length; i += size)
            parts.add(Arrays.copyOfRange(bytes, i, Math.min(bytes.length, i + size)));
        return parts.toArray(new byte[0][]);
    }

    /** Reads until a terminal item; the scripted body makes everything available at once. */
    private static List<StreamItem> drain(EventStream stream)
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

    /** An upstream that records what it is sent and answers with the scripted response; also the binding context. */
    private static final class ScriptedUpstream implements Upstream, BindingContext
    {
        private final List<UpstreamRequest> sent = new ArrayList<>();
        private ScriptedResponse response;
        private UpstreamOptions options;

        void answer(int status, byte[]... chunks)
        {
            response = new ScriptedResponse(status, TestBody.of(chunks));
        }

        @Override
        public CompletionStage<UpstreamResponse> send(UpstreamRequest request, Exchange exchange)
        {
            sent.add(request);
            return CompletableFuture.completedFuture(response);
        }

        @Override
        public UpstreamOptions options()
        {
            return options;
        }

        @Override
        public Next exit(String bindingName)
        {
            throw new AssertionError("a client binding has no exit");
        }

        @Override
        public Upstream upstream(UpstreamOptions upstreamOptions)
        {
            this.options = upstreamOptions;
            return this;
        }

        @Override
        public String env(String name)
        {
            return null;
        }
    }

    private record ScriptedResponse(int status, TestBody body) implements UpstreamResponse
    {
        @Override
        public String header(String name)
        {
            return null;
        }
    }
}
