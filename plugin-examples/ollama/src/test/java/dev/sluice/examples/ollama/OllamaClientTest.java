package dev.sluice.examples.ollama;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.BooleanNode;
import dev.sluice.api.testing.TestBody;
import dev.sluice.api.ErrorKind;
import dev.sluice.api.GatewayException;
import dev.sluice.api.exchange.Exchange;
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
import dev.sluice.api.upstream.BodySource;
import dev.sluice.api.upstream.HttpVersion;
import dev.sluice.api.upstream.Upstream;
import dev.sluice.api.upstream.UpstreamOptions;
import dev.sluice.api.upstream.UpstreamRequest;
import dev.sluice.api.upstream.UpstreamResponse;
import org.junit.jupiter.api.Test;

import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

import static org.assertj.core.api.Assertions.assertThat;

/** The client binding against a stand-in upstream: which bytes go out, and what comes back for which client. */
class OllamaClientTest
{
    private static final String OLLAMA_BODY = "{\"model\":\"llama3.2\",\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}],"
        + "\"keep_alive\":\"10m\"}";

    private final FakeUpstream upstream = new FakeUpstream();

    private OllamaClient client(List<String> forward, List<String> drop, String apiKey)
    {
        return new OllamaClient(new OllamaClientOptions("http://127.0.0.1:11434", apiKey, forward, null, null, drop), upstream);
    }

    private static ChatRequest hi(String model, boolean stream, Map<String, JsonNode> extensions)
    {
        return new ChatRequest(model, List.of(), List.of(Message.text(Role.USER, "Hi")), List.of(), null, null, null,
            null, stream, false, null, null, extensions);
    }

    private static Reply join(CompletionStage<Reply> stage)
    {
        return stage.toCompletableFuture().join();
    }

    private static GatewayException failure(CompletionStage<Reply> stage)
    {
        try
        {
            stage.toCompletableFuture().join();
            throw new AssertionError("expected a failure");
        }
        catch (java.util.concurrent.CompletionException e)
        {
            return GatewayException.of(e);
        }
    }

    @Test
    void anUnmodifiedOllamaRequestIsForwardedAsItsOwnBytes()
    {
        upstream.respond(200, Fixtures.bytes("stream-text.ndjson"));
        TestExchange exchange = new TestExchange(hi("llama3.2", true, null), OLLAMA_BODY).dialect("ollama")
            .header("Authorization", "Bearer client-key").header("x-request-id", "r-1");

        Reply reply = join(client(List.of("X-Request-Id"), List.of(), "sk-gateway").handle(exchange));

        UpstreamRequest sent = upstream.requests.get(0);
        assertThat(sent.body()).isSameAs(exchange.body());
        assertThat(sent.method()).isEqualTo("POST");
        assertThat(sent.path()).isEqualTo("/api/chat");
        assertThat(sent.headers()).containsExactly(Map.entry("Authorization", "Bearer sk-gateway"),
            Map.entry("Accept", "application/x-ndjson"), Map.entry("x-request-id", "r-1"));
        assertThat(exchange.decodes()).as("the fast path never decodes").isZero();

        List<StreamItem> items = drain(reply);
        assertThat(items).filteredOn(RawFrame.class::isInstance).isNotEmpty();
        assertThat(items.get(items.size() - 1)).isSameAs(StreamItem.END);
        assertThat(exchange.usage()).isEqualTo(new Usage(26, 282, 0, 0, 0));
    }

    @Test
    void anAliasedModelIsSplicedIntoTheRawBytes()
    {
        upstream.respond(200, Fixtures.utf8("{\"model\":\"llama3.2:3b\","
            + "\"message\":{\"role\":\"assistant\",\"content\":\"Hello\"},"
            + "\"done\":true,\"prompt_eval_count\":5,\"eval_count\":2}"));
        String body = OLLAMA_BODY.replace("}],", "}],\"stream\":false,");
        TestExchange exchange = new TestExchange(hi("llama3.2", false, null), body).dialect("ollama");
        exchange.targetModel("llama3.2:3b");

        Reply reply = join(client(List.of(), List.of(), null).handle(exchange));

        assertThat(Fixtures.string(upstream.requests.get(0).body())).isEqualTo(body.replace("\"llama3.2\"", "\"llama3.2:3b\""));
        assertThat(upstream.requests.get(0).headers()).containsExactly(Map.entry("Accept", "application/json"));
        Reply.Bytes bytes = (Reply.Bytes)reply;
        assertThat(Fixtures.string(bytes.body())).startsWith("{\"model\":\"llama3.2:3b\"");
        assertThat(bytes.usage()).isEqualTo(new Usage(5, 2, 0, 0, 0));
        assertThat(exchange.usage()).isEqualTo(new Usage(5, 2, 0, 0, 0));
    }

    @Test
    void aModifiedOllamaRequestIsReEncodedWithItsOwnFieldsButTheAnswerIsStillRelayed()
    {
        upstream.respond(200, Fixtures.bytes("stream-text.ndjson"));
        TestExchange exchange = new TestExchange(hi("llama3.2", true, null), OLLAMA_BODY).dialect("ollama");
        exchange.request(hi("llama3.2", true, Map.of("keep_alive", Fixtures.tree("\"10m\""))));

        Reply reply = join(client(List.of(), List.of(), null).handle(exchange));

        assertThat(Fixtures.tree(upstream.requests.get(0).body())).isEqualTo(Fixtures.tree(
            "{\"model\":\"llama3.2\",\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}],\"stream\":true,"
                + "\"keep_alive\":\"10m\"}"));
        assertThat(drain(reply)).filteredOn(RawFrame.class::isInstance).isNotEmpty();
    }

    @Test
    void aRequestFromAnotherDialectIsTranslatedAndSoIsTheStream()
    {
        upstream.respond(200, Fixtures.bytes("stream-tools.ndjson"));
        TestExchange exchange = new TestExchange(hi("llama3.2", true, Map.of("store", BooleanNode.FALSE)),
            "{\"model\":\"llama3.2\",\"stream\":true}").header("Authorization", "Bearer client-key");

        Reply reply = join(client(List.of(), List.of("store"), null).handle(exchange));

        assertThat(Fixtures.tree(upstream.requests.get(0).body())).isEqualTo(Fixtures.tree(
            "{\"model\":\"llama3.2\",\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}],\"stream\":true}"));
        assertThat(upstream.requests.get(0).headers()).as("the client's key never goes upstream")
            .containsExactly(Map.entry("Accept", "application/x-ndjson"));
        List<StreamItem> items = drain(reply);
        assertThat(items).noneMatch(RawFrame.class::isInstance);
        assertThat(items).contains(new StreamEvent.ToolCallStart(2, 1, "call_x1", "get_time"));
        assertThat(items.get(items.size() - 1)).isSameAs(StreamItem.END);
        assertThat(exchange.usage()).isEqualTo(new Usage(169, 15, 0, 0, 0));
    }

    @Test
    void anotherDialectsFieldIsRefusedByNameWithoutCallingTheUpstream()
    {
        TestExchange exchange = new TestExchange(hi("llama3.2", false, Map.of("logit_bias", Fixtures.tree("{\"50256\":-100}"))),
            "{\"model\":\"llama3.2\"}");

        GatewayException e = failure(client(List.of(), List.of("store"), null).handle(exchange));

        assertThat(e.kind()).isEqualTo(ErrorKind.UNSUPPORTED);
        assertThat(e.getMessage()).isEqualTo("logit_bias: is a field of the openai dialect that cannot be translated to ollama"
            + " (an operator can allow dropping it: drop_unsupported)");
        assertThat(upstream.requests).isEmpty();
    }

    @Test
    void aNonStreamedAnswerIsDecodedForAnotherDialect()
    {
        upstream.respond(200, Fixtures.bytes("response-tools.json"));
        TestExchange exchange = new TestExchange(hi("llama3.2", false, null), "{\"model\":\"llama3.2\"}");

        Reply.Message reply = (Reply.Message)join(client(List.of(), List.of(), null).handle(exchange));

        assertThat(reply.response().stopReason()).isEqualTo(StopReason.TOOL_USE);
        assertThat(reply.response().content()).hasSize(3).element(1).isInstanceOf(ContentPart.ToolCall.class);
        assertThat(exchange.usage()).isEqualTo(new Usage(169, 18, 0, 0, 0));
    }

    @Test
    void anErrorStatusIsMappedWithTheUpstreamsMessage()
    {
        upstream.respond(404, Fixtures.utf8("{\"error\":\"model \\\"llama9\\\" not found, try pulling it first\"}"));
        TestExchange exchange = new TestExchange(hi("llama9", true, null), "{\"model\":\"llama9\"}").dialect("ollama");

        GatewayException e = failure(client(List.of(), List.of(), null).handle(exchange));

        assertThat(e.kind()).isEqualTo(ErrorKind.NOT_FOUND);
        assertThat(e.status()).isEqualTo(404);
        assertThat(e.getMessage()).isEqualTo("upstream: model \"llama9\" not found, try pulling it first");
    }

    private static List<StreamItem> drain(Reply reply)
    {
        var events = ((Reply.Stream)reply).events();
        List<StreamItem> items = new ArrayList<>();
        while (true)
        {
            StreamItem item = events.read();
            assertThat(item).isNotNull();
            items.add(item);
            if (item == StreamItem.END || item instanceof StreamEvent.Error)
                return items;
        }
    }

    /** An upstream that records requests and answers each with the next canned response, at once. */
    private static final class FakeUpstream implements Upstream
    {
        private final List<UpstreamRequest> requests = new ArrayList<>();
        private int status;
        private byte[] body;

        void respond(int newStatus, byte[] newBody)
        {
            this.status = newStatus;
            this.body = newBody;
        }

        @Override
        public CompletionStage<UpstreamResponse> send(UpstreamRequest request, Exchange exchange)
        {
            requests.add(request);
            TestBody source = TestBody.split(body, 37);
            return CompletableFuture.completedFuture(new UpstreamResponse()
            {
                @Override
                public int status()
                {
                    return status;
                }

                @Override
                public String header(String name)
                {
                    return null;
                }

                @Override
                public BodySource body()
                {
                    return source;
                }
            });
        }

        @Override
        public UpstreamOptions options()
        {
            return new UpstreamOptions(URI.create("http://127.0.0.1:11434"), HttpVersion.HTTP_1_1, 1, Duration.ofSeconds(1),
                Duration.ofSeconds(1), Duration.ofSeconds(1), null);
        }
    }
}
