package dev.sluice.examples.ollama;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.BooleanNode;
import com.fasterxml.jackson.databind.node.IntNode;
import com.fasterxml.jackson.databind.node.TextNode;
import dev.sluice.api.ErrorKind;
import dev.sluice.api.GatewayException;
import dev.sluice.api.codec.RequestPeek;
import dev.sluice.api.model.ChatRequest;
import dev.sluice.api.model.ContentPart;
import dev.sluice.api.model.Message;
import dev.sluice.api.model.ChatRequest.ResponseFormat;
import dev.sluice.api.model.Message.Role;
import dev.sluice.api.model.ChatRequest.Sampling;
import dev.sluice.api.model.Tool;
import dev.sluice.api.model.ChatRequest.ToolChoice;
import dev.sluice.support.codec.Translation;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvFileSource;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

class OllamaRequestCodecTest
{
    static final String PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";
    static final String JPEG = "/9j/4AAQSkZJRgABAQEASABIAAD/2wBDAAMCAgICAgMCAgIDAwMDBAYEBAQEBAgGBgUGCQgKCgkICQkK"
        + "DA8MCgsOCwkJDRENDg8QEBEQCgwSExIQEw8QEBD/yQALCAABAAEBAREA/8wABgAQEAX/2gAIAQEAAD8A0s8g/9k=";

    private final OllamaCodec codec = OllamaCodec.INSTANCE;

    private ChatRequest decode(String json)
    {
        return codec.decodeRequest(json.getBytes(StandardCharsets.UTF_8));
    }

    private GatewayException decodeFails(String json)
    {
        return catchThrowableOfType(GatewayException.class, () -> decode(json));
    }

    private GatewayException encodeFails(ChatRequest request)
    {
        return catchThrowableOfType(GatewayException.class, () -> codec.encodeRequest(request));
    }

    private static ChatRequest request(List<Message> messages)
    {
        return new ChatRequest("m", List.of(), messages, List.of(), null, null, null, null, false, false, null, null, null);
    }

    @ParameterizedTest
    @ValueSource(strings = {"request-history-tools.json", "request-simple.json", "request-from-openai.json"})
    void roundTripReproducesTheFixture(String fixture)
    {
        byte[] body = Fixtures.bytes(fixture);
        byte[] encoded = codec.encodeRequest(codec.decodeRequest(body));
        Fixtures.assertSameJson(encoded, body);
        // And the encoded form is stable.
        assertThat(codec.encodeRequest(codec.decodeRequest(encoded))).isEqualTo(encoded);
    }

    @Test
    void decodesHistoryWithSystemPromptImagesToolCallsAndResults()
    {
        byte[] body = Fixtures.bytes("request-history-tools.json");
        ChatRequest r = codec.decodeRequest(body);
        JsonNode tree = Fixtures.tree(body);

        assertThat(r.model()).isEqualTo("llama3.2:3b");
        assertThat(r.system()).containsExactly(
            new ContentPart.Text("You are a dispatcher for a logistics company. Use the tools."),
            new ContentPart.Text("Answer in French when asked in French."));
        assertThat(r.messages()).containsExactly(
            new Message(Role.USER, List.of(new ContentPart.Image(null, "image/png", PNG, null, null),
                new ContentPart.Text("What is the weather at the depots in Liège and 東京? Here is the route map.")), null),
            new Message(Role.ASSISTANT, List.of(new ContentPart.Thinking("Two cities, so two calls.", null),
                new ContentPart.ToolCall("call_ollama_3_0", "get_weather", "{\"city\":\"Liège\",\"unit\":\"celsius\"}"),
                new ContentPart.ToolCall("call_ollama_3_1", "get_weather",
                    "{\"city\":\"東京\",\"unit\":\"celsius\",\"days\":[1,2]}")),
                null),
            new Message(Role.TOOL, List.of(new ContentPart.ToolResult("call_ollama_3_0",
                List.of(new ContentPart.Text("{\"temp\": 11, \"sky\": \"drizzle\"}")), false, null)), null),
            new Message(Role.TOOL, List.of(new ContentPart.ToolResult("call_ollama_3_1",
                List.of(new ContentPart.Text("{\"temp\": 23, \"sky\": \"clear\"}")), false, null)), null),
            Message.text(Role.ASSISTANT, "Liège: 11 °C and drizzle. 東京: 23 °C and clear."),
            Message.text(Role.SYSTEM, "Keep the next answer under 20 words."),
            Message.text(Role.USER, "Et demain ? 🚚"));
        assertThat(r.tools()).containsExactly(new Tool("get_weather", "Current weather for a city.",
            tree.at("/tools/0/function/parameters"), null, null));
        assertThat(r.toolChoice()).isNull();
        assertThat(r.responseFormat())
            .isEqualTo(new ResponseFormat(ResponseFormat.Type.JSON_SCHEMA, null, tree.get("format"), null));
        assertThat(r.sampling()).isEqualTo(new Sampling(0.2, 0.9, 40, 256, List.of("\n\n", "END"), 0.1, 0.3, 42L));
        assertThat(r.extensions()).containsOnlyKeys("options.num_ctx", "options.repeat_penalty", "think", "keep_alive");
        assertThat(r.extensions().get("options.num_ctx")).isEqualTo(IntNode.valueOf(8192));
        assertThat(r.extensions().get("think")).isEqualTo(BooleanNode.TRUE);
        assertThat(r.extensions().get("keep_alive")).isEqualTo(TextNode.valueOf("10m"));
        assertThat(r.stream()).isTrue();
        assertThat(r.includeUsage()).isTrue();
    }

    @Test
    void streamsUnlessTheRequestSaysFalse()
    {
        assertThat(decode("{\"model\":\"m\",\"messages\":[]}").stream()).isTrue();
        assertThat(decode("{\"model\":\"m\",\"messages\":[],\"stream\":null}").stream()).isTrue();
        assertThat(decode("{\"model\":\"m\",\"messages\":[],\"stream\":false}").stream()).isFalse();
        assertThat(decode("{\"model\":\"m\"}").messages()).as("Ollama loads a model for a request without messages").isEmpty();
    }

    @ParameterizedTest
    @ValueSource(strings = {
        "{\"model\":\"llama3.2\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}",
        "{\"model\":\"llama3.2\",\"messages\":[{\"role\":\"user\",\"content\":\"set \\\"stream\\\": false please\"}]}",
        "{\"model\":\"llama3.2\",\"messages\":[{\"role\":\"user\",\"content\":\"stream\"}]}",
        "{\"model\":\"llama3.2\",\"stream\":null,\"messages\":[]}",
        "{\"model\":\"llama3.2\",\"stream\":true,\"messages\":[]}",
        "{\"options\":{\"stream\":false},\"model\":\"llama3.2\",\"messages\":[]}"})
    void peekReadsAnAbsentOrNullStreamFlagAsStreaming(String body)
    {
        RequestPeek peek = codec.peek(Fixtures.utf8(body));
        assertThat(peek.model()).isEqualTo("llama3.2");
        assertThat(peek.stream()).isTrue();
    }

    @ParameterizedTest
    @ValueSource(strings = {
        "{\"model\":\"llama3.2\",\"stream\":false,\"messages\":[]}",
        "{\"model\":\"llama3.2\",\"messages\":[{\"role\":\"user\",\"content\":\"x\"}], \"stream\" : false}",
        "{\"model\":\"llama3.2\",\"\\u0073tream\":false,\"messages\":[]}"})
    void peekSeesAnExplicitFalse(String body)
    {
        assertThat(codec.peek(Fixtures.utf8(body)).stream()).isFalse();
    }

    @Test
    void peekFindsTheModelOffsetsSoAnAliasCanBeSplicedIn()
    {
        byte[] body = Fixtures.bytes("request-simple.json");
        RequestPeek peek = codec.peek(body);
        byte[] aliased = codec.rewriteModel(body, peek, "llama3.2:3b-instruct");
        assertThat(Fixtures.string(aliased)).isEqualTo(Fixtures.string(body).replace("\"llama3.2\"", "\"llama3.2:3b-instruct\""));
    }

    @Test
    void peekRejectsWhatIsNotOneObjectWithAModel()
    {
        GatewayException e = catchThrowableOfType(GatewayException.class, () -> codec.peek(Fixtures.utf8("{\"messages\":[]}")));
        assertThat(e.kind()).isEqualTo(ErrorKind.INVALID_REQUEST);
        assertThat(e.getMessage()).isEqualTo("model: must be a non-empty string");
    }

    @Test
    void encodesARequestFromAnotherDialectInOllamasShapes()
    {
        JsonNode parameters = Fixtures.tree("{\"type\":\"object\",\"properties\":{\"amount\":{\"type\":\"number\"}}}");
        ChatRequest openai = new ChatRequest("qwen3:8b", List.of(new ContentPart.Text("You are terse.")),
            List.of(new Message(Role.USER, List.of(new ContentPart.Text("Compare these two charts, then convert 100 EUR."),
                    new ContentPart.Image("data:image/png;base64," + PNG, null, null, "high", null),
                    new ContentPart.Image(null, "image/jpeg", JPEG, null, null)), null),
                new Message(Role.ASSISTANT, List.of(new ContentPart.ToolCall("call_8f3kQ2mWcY1bN0", "convert_currency",
                    "{\"amount\": 100, \"from\": \"EUR\", \"to\": \"USD\"}")), null),
                new Message(Role.TOOL, List.of(new ContentPart.ToolResult("call_8f3kQ2mWcY1bN0",
                    List.of(new ContentPart.Text("{\"amount\": 108.4}")), false, null)), null)),
            List.of(new Tool("convert_currency", "Converts an amount between ISO 4217 currencies.", parameters, false, null)),
            new ToolChoice.Auto(), true, new Sampling(0.5, null, null, 300, List.of("END"), null, null, 7L),
            new ResponseFormat(ResponseFormat.Type.JSON_OBJECT, null, null, null), false, true, "user-8812",
            Map.of("tenant", "acme"), null);

        Fixtures.assertSameJson(codec.encodeRequest(openai), Fixtures.bytes("request-from-openai.json"));
    }

    @Test
    void anthropicStyleToolResultsInAUserTurnBecomeToolMessagesFirst()
    {
        ChatRequest r = request(List.of(
            new Message(Role.ASSISTANT, List.of(new ContentPart.Text("Checking."),
                new ContentPart.ToolCall("toolu_01", "lookup", "{\"q\":\"x\"}")), null),
            new Message(Role.USER, List.of(
                new ContentPart.ToolResult("toolu_01", List.of(new ContentPart.Text("42")), true, null),
                new ContentPart.Text("Thanks, and then?")), null)));

        JsonNode messages = Fixtures.tree(codec.encodeRequest(r)).get("messages");

        assertThat(messages).containsExactly(
            Fixtures.tree("{\"role\":\"assistant\",\"content\":\"Checking.\",\"tool_calls\":[{\"id\":\"toolu_01\","
                + "\"function\":{\"name\":\"lookup\",\"arguments\":{\"q\":\"x\"}}}]}"),
            Fixtures.tree("{\"role\":\"tool\",\"content\":\"42\",\"tool_name\":\"lookup\",\"tool_call_id\":\"toolu_01\"}"),
            Fixtures.tree("{\"role\":\"user\",\"content\":\"Thanks, and then?\"}"));
    }

    @Test
    void toolChoiceNoneSendsNoToolsAndAutoIsTheDefault()
    {
        Tool tool = new Tool("f", null, null, null, null);
        ChatRequest none = new ChatRequest("m", List.of(), List.of(Message.text(Role.USER, "hi")), List.of(tool),
            new ToolChoice.None(), null, null, null, true, false, null, null, null);
        assertThat(Fixtures.tree(codec.encodeRequest(none)).has("tools")).isFalse();

        ChatRequest auto = new ChatRequest("m", List.of(), List.of(Message.text(Role.USER, "hi")), List.of(tool),
            new ToolChoice.Auto(), true, null, null, true, false, null, null, null);
        assertThat(Fixtures.tree(codec.encodeRequest(auto)).get("tools"))
            .isEqualTo(Fixtures.tree("[{\"type\":\"function\",\"function\":{\"name\":\"f\"}}]"));
    }

    @Test
    void refusesWhatOllamaCannotDoNamingTheField()
    {
        Message hi = Message.text(Role.USER, "hi");
        assertUnsupported(new ChatRequest("m", List.of(), List.of(hi), List.of(), new ToolChoice.Required(), null, null, null,
            false, false, null, null, null), "tool_choice", "tool_choice: \"required\" cannot be translated to ollama"
            + " (it cannot force a tool call)");
        assertUnsupported(new ChatRequest("m", List.of(), List.of(hi), List.of(), new ToolChoice.Named("f"), null, null, null,
            false, false, null, null, null), "tool_choice", "tool_choice: a named tool cannot be translated to ollama"
            + " (it cannot force a tool call)");
        assertUnsupported(new ChatRequest("m", List.of(), List.of(hi), List.of(), null, false, null, null, false, false, null,
            null, null), "parallel_tool_calls", "parallel_tool_calls: false cannot be translated to ollama"
            + " (it cannot limit an answer to one call)");
        assertUnsupported(new ChatRequest("m", List.of(), List.of(hi), List.of(new Tool("f", null, null, true, null)), null,
            null, null, null, false, false, null, null, null), "tools[0].function.strict",
            "tools[0].function.strict: true cannot be translated to ollama (it does not constrain tool arguments to the schema)");
        assertUnsupported(request(List.of(new Message(Role.USER, List.of(new ContentPart.Text("hi")), "bob"))),
            "messages[0].name", "messages[0].name: participant names cannot be sent to an ollama upstream");
        assertUnsupported(request(List.of(new Message(Role.USER, List.of(
                new ContentPart.Image("https://example.com/chart.png", null, null, null, null)), null))),
            "messages[0].content[0]", "messages[0].content[0]: an image URL cannot be sent to an ollama upstream"
                + " (expected: base64 data or a base64 data: URL)");
        assertUnsupported(request(List.of(new Message(Role.USER, List.of(
                new ContentPart.Image("data:image/svg+xml,<svg/>", null, null, null, null)), null))),
            "messages[0].content[0]",
            "messages[0].content[0]: a data: URL that is not base64 cannot be sent to an ollama upstream");
        assertUnsupported(request(List.of(new Message(Role.ASSISTANT, List.of(
                new ContentPart.ToolCall("call_1", "f", "[1, 2]")), null))),
            "messages[0].content[0].arguments", "messages[0].content[0].arguments: value: \"[1, 2]\" (expected: a JSON object;"
                + " an ollama upstream takes tool arguments as an object)");
        assertUnsupported(request(List.of(new Message(Role.TOOL, List.of(
                new ContentPart.ToolResult("call_gone", List.of(new ContentPart.Text("42")), false, null)), null))),
            "messages[0].content[0]", "messages[0].content[0]: the result of tool call \"call_gone\" answers no tool call of"
                + " this request (expected: a call with that id in an earlier assistant message; an ollama upstream identifies"
                + " results by the tool's name)");
        ChatRequest imageSystem = new ChatRequest("m", List.of(new ContentPart.Image(null, "image/png", PNG, null, null)),
            List.of(hi), List.of(), null, null, null, null, false, false, null, null, null);
        assertUnsupported(imageSystem, "system[0]", "system[0]: an image cannot be sent to an ollama upstream"
            + " (system prompts are text only)");
        assertUnsupported(request(List.of(new Message(Role.USER, List.of(new ContentPart.Thinking("hm", null)), null))),
            "messages[0].content[0]", "messages[0].content[0]: reasoning in a user message cannot be sent to an ollama upstream");
    }

    private void assertUnsupported(ChatRequest request, String param, String message)
    {
        GatewayException e = encodeFails(request);
        assertThat(e).as(param).isNotNull();
        assertThat(e.kind()).isEqualTo(ErrorKind.UNSUPPORTED);
        assertThat(e.status()).isEqualTo(400);
        assertThat(e.param()).isEqualTo(param);
        assertThat(e.getMessage()).isEqualTo(message);
    }

    @Test
    void emptyToolArgumentsAreAnEmptyObject()
    {
        ChatRequest r = request(List.of(new Message(Role.ASSISTANT, List.of(new ContentPart.ToolCall("c1", "now", "")), null)));
        assertThat(Fixtures.tree(codec.encodeRequest(r)).at("/messages/0/tool_calls/0/function/arguments"))
            .isEqualTo(Fixtures.tree("{}"));
    }

    @Test
    void toolResultsAreMatchedToCallsByIdThenNameThenOrder()
    {
        ChatRequest r = decode("{\"model\":\"m\",\"messages\":["
            + "{\"role\":\"assistant\",\"tool_calls\":[{\"function\":{\"name\":\"a\",\"arguments\":{}}},"
            + "{\"id\":\"call_b\",\"function\":{\"name\":\"b\",\"arguments\":{}}},"
            + "{\"function\":{\"name\":\"c\",\"arguments\":{}}}]},"
            + "{\"role\":\"tool\",\"content\":\"for b\",\"tool_call_id\":\"call_b\"},"
            + "{\"role\":\"tool\",\"content\":\"for c\",\"tool_name\":\"c\"},"
            + "{\"role\":\"tool\",\"content\":\"for a\"},"
            + "{\"role\":\"tool\",\"content\":\"orphan\",\"tool_name\":\"z\"}]}");

        assertThat(r.messages().subList(1, 5)).extracting(m -> ((ContentPart.ToolResult)m.content().get(0)).toolCallId())
            .containsExactly("call_b", "call_ollama_0_2", "call_ollama_0_0", "call_ollama_4");
        // Back to Ollama: every result names its tool again; made-up ids stay out of the wire.
        JsonNode messages = Fixtures.tree(codec.encodeRequest(r)).get("messages");
        assertThat(messages.get(1)).isEqualTo(Fixtures.tree(
            "{\"role\":\"tool\",\"content\":\"for b\",\"tool_name\":\"b\",\"tool_call_id\":\"call_b\"}"));
        assertThat(messages.get(2)).isEqualTo(Fixtures.tree("{\"role\":\"tool\",\"content\":\"for c\",\"tool_name\":\"c\"}"));
        assertThat(messages.get(3)).isEqualTo(Fixtures.tree("{\"role\":\"tool\",\"content\":\"for a\",\"tool_name\":\"a\"}"));
        assertThat(messages.get(4)).isEqualTo(Fixtures.tree("{\"role\":\"tool\",\"content\":\"orphan\",\"tool_name\":\"z\"}"));
    }

    @Test
    void dataUrlImagesAreTakenApartAndBareBase64IsSniffed()
    {
        ChatRequest r = decode("{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"images\":["
            + "\"data:image/webp;base64,UklGRiQAAABXRUJQ\","
            + "\"" + JPEG + "\",\"aGVsbG8=\"]}]}");
        assertThat(r.messages().get(0).content()).containsExactly(
            new ContentPart.Image(null, "image/webp", "UklGRiQAAABXRUJQ", null, null),
            new ContentPart.Image(null, "image/jpeg", JPEG, null, null),
            new ContentPart.Image(null, null, "aGVsbG8=", null, null));
    }

    @Test
    void unmappedOptionsTravelAsNamedExtensionsThatOtherDialectsRefuseOrDrop()
    {
        ChatRequest r = decode("{\"model\":\"m\",\"messages\":[],\"options\":{\"num_ctx\":4096,\"num_predict\":-1,"
            + "\"temperature\":null}}");
        assertThat(r.sampling()).isEqualTo(Sampling.DEFAULTS);
        assertThat(r.extensions()).containsOnlyKeys("options.num_ctx", "options.num_predict");

        ChatRequest numCtx = decode("{\"model\":\"m\",\"messages\":[],\"options\":{\"num_ctx\":4096}}");
        GatewayException e = catchThrowableOfType(GatewayException.class,
            () -> Translation.withoutForeignExtensions(numCtx, "ollama", "openai", Set.of()));
        assertThat(e.kind()).isEqualTo(ErrorKind.UNSUPPORTED);
        assertThat(e.param()).isEqualTo("options.num_ctx");
        assertThat(e.getMessage()).isEqualTo("options.num_ctx: is a field of the ollama dialect that cannot be translated to openai"
            + " (an operator can allow dropping it: drop_unsupported)");
        assertThat(Translation.withoutForeignExtensions(r, "ollama", "openai", Set.of("options.num_ctx", "options.num_predict"))
            .extensions()).isEmpty();

        // The same dialect writes them back into options.
        assertThat(Fixtures.tree(codec.encodeRequest(r)).get("options"))
            .isEqualTo(Fixtures.tree("{\"num_ctx\":4096,\"num_predict\":-1}"));
    }

    @ParameterizedTest
    @CsvFileSource(resources = "/fixtures/bad-requests.psv", delimiter = '|', quoteCharacter = '`')
    void rejectsWrongTypesNamingThePath(String body, String message, String param)
    {
        GatewayException e = decodeFails(body);
        assertThat(e).isNotNull();
        assertThat(e.kind()).isEqualTo(ErrorKind.INVALID_REQUEST);
        assertThat(e.getMessage()).isEqualTo(message);
        assertThat(e.param()).isEqualTo(param);
    }

    @ParameterizedTest
    @CsvFileSource(resources = "/fixtures/unsupported-requests.psv", delimiter = '|', quoteCharacter = '`')
    void refusesWhatTheCanonicalModelCannotCarry(String body, String message)
    {
        GatewayException e = decodeFails(body);
        assertThat(e).isNotNull();
        assertThat(e.kind()).isEqualTo(ErrorKind.UNSUPPORTED);
        assertThat(e.getMessage()).isEqualTo(message);
        assertThat(e.param()).isEqualTo(message.substring(0, message.indexOf(": ")));
    }

    @Test
    void malformedJsonIsAnInvalidRequest()
    {
        GatewayException e = decodeFails("{\"model\":\"m\",\"messages\":[");
        assertThat(e.kind()).isEqualTo(ErrorKind.INVALID_REQUEST);
        assertThat(e.getMessage()).startsWith("request body is not valid JSON");
    }
}
