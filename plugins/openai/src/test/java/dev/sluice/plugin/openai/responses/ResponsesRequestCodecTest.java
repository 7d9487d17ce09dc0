package dev.sluice.plugin.openai.responses;

import dev.sluice.api.ErrorKind;
import dev.sluice.api.GatewayException;
import dev.sluice.api.codec.RequestPeek;
import dev.sluice.api.model.ChatRequest;
import dev.sluice.api.model.ChatRequest.ResponseFormat;
import dev.sluice.api.model.ChatRequest.Sampling;
import dev.sluice.api.model.ChatRequest.ToolChoice;
import dev.sluice.api.model.ContentPart;
import dev.sluice.api.model.Message;
import dev.sluice.api.model.Message.Role;
import dev.sluice.api.model.Tool;
import dev.sluice.support.json.Json;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

class ResponsesRequestCodecTest
{
    private static final ResponsesCodec CODEC = ResponsesCodec.INSTANCE;

    private static ChatRequest decode(String json)
    {
        return CODEC.decodeRequest(json.getBytes(StandardCharsets.UTF_8));
    }

    private static GatewayException refusal(String json)
    {
        return catchThrowableOfType(GatewayException.class, () -> decode(json));
    }

    @Test
    void aStringInputIsOneUserMessage()
    {
        ChatRequest request = decode("{\"model\":\"gpt-4.1\",\"input\":\"Tell me a joke\",\"instructions\":\"Be brief\"}");
        assertThat(request.model()).isEqualTo("gpt-4.1");
        assertThat(request.system()).containsExactly(new ContentPart.Text("Be brief"));
        assertThat(request.messages()).containsExactly(Message.text(Role.USER, "Tell me a joke"));
        assertThat(request.stream()).isFalse();
        assertThat(request.extensions()).isEmpty();

        Golden.assertJson(CODEC.encodeRequest(request), "request-string.encoded.json");
    }

    @Test
    void decodesItemsIntoTurnsWithReasoningCallsAndResults()
    {
        ChatRequest request = CODEC.decodeRequest(Golden.fixture("request-items.json"));

        assertThat(request.system()).containsExactly(new ContentPart.Text("You are a weather assistant."),
            new ContentPart.Text("Answer in one sentence."));
        List<Message> messages = request.messages();
        assertThat(messages).extracting(Message::role)
            .containsExactly(Role.USER, Role.ASSISTANT, Role.TOOL, Role.ASSISTANT, Role.USER);
        assertThat(messages.get(0).content()).containsExactly(
            new ContentPart.Text("What is the weather in Paris? Here is the sky:"),
            new ContentPart.Image("https://example.com/sky.png", null, null, "low", null));
        // The reasoning and the call it led to are one assistant turn; the summary parts are joined.
        assertThat(messages.get(1).content()).containsExactly(
            new ContentPart.Thinking("The user wants the weather.\n\nCall get_weather for Paris.",
                "gAAAAABn8qEncryptedReasoning=="),
            new ContentPart.ToolCall("call_Paris01", "get_weather", "{\"city\":\"Paris\"}"));
        assertThat(messages.get(2).content()).containsExactly(new ContentPart.ToolResult("call_Paris01",
            List.of(new ContentPart.Text("{\"temperature\":18,\"sky\":\"clear\"}")), false, null));
        assertThat(messages.get(3)).isEqualTo(Message.text(Role.ASSISTANT, "It is 18°C and clear in Paris."));
        assertThat(messages.get(4)).isEqualTo(Message.text(Role.USER, "And tomorrow?"));

        assertThat(request.tools()).singleElement().satisfies(tool ->
        {
            assertThat(tool.name()).isEqualTo("get_weather");
            assertThat(tool.strict()).isTrue();
            assertThat(tool.parameters().get("required").get(0).asText()).isEqualTo("city");
        });
        assertThat(request.toolChoice()).isEqualTo(new ToolChoice.Auto());
        assertThat(request.parallelToolCalls()).isFalse();
        assertThat(request.sampling()).isEqualTo(new Sampling(0.2, 0.9, null, 500, List.of(), null, null, null));
        assertThat(request.metadata()).isEqualTo(Map.of("team", "weather"));
        assertThat(request.user()).isEqualTo("user-1234");
        assertThat(request.stream()).isTrue();
        assertThat(request.includeUsage()).as("a Responses stream always reports usage").isTrue();
        // reasoning has no canonical home: it travels raw; store: false asks for nothing and is not kept.
        assertThat(request.extensions()).containsOnlyKeys("reasoning");

        Golden.assertJson(CODEC.encodeRequest(request), "request-items.encoded.json");
    }

    @Test
    void reEncodingTheEncodedRequestGivesTheSameCanonicalRequest()
    {
        ChatRequest request = CODEC.decodeRequest(Golden.fixture("request-items.json"));
        ChatRequest again = CODEC.decodeRequest(CODEC.encodeRequest(request));
        // instructions absorb the leading developer message, so the system prompt comes back as one text.
        assertThat(again.messages()).isEqualTo(request.messages());
        assertThat(again.tools()).isEqualTo(request.tools());
        assertThat(again.sampling()).isEqualTo(request.sampling());
        assertThat(again.extensions()).isEqualTo(request.extensions());
    }

    @Test
    void twoTurnFunctionCallingFromAnotherDialectBecomesCallAndOutputItems()
    {
        ChatRequest chat = new ChatRequest("claude-sonnet-4", List.of(new ContentPart.Text("Use tools.")), List.of(
            Message.text(Role.USER, "Weather in Paris?"),
            new Message(Role.ASSISTANT, List.of(new ContentPart.Text("Let me check."),
                new ContentPart.ToolCall("toolu_01", "get_weather", "{\"city\":\"Paris\"}")), null),
            new Message(Role.USER, List.of(new ContentPart.ToolResult("toolu_01", List.of(new ContentPart.Text("18C")),
                false, null), new ContentPart.Text("Thanks")), null)),
            List.of(new Tool("get_weather", "Weather", Json.MAPPER.createObjectNode().put("type", "object"), null, null)),
            new ToolChoice.Named("get_weather"), null, new Sampling(null, null, null, 256, List.of(), null, null, null),
            null, false, false, null, Map.of(), Map.of());

        Golden.assertJson(CODEC.encodeRequest(chat), "request-two-turns.encoded.json");
        ChatRequest back = CODEC.decodeRequest(CODEC.encodeRequest(chat));
        assertThat(back.messages()).isEqualTo(List.of(chat.messages().get(0), chat.messages().get(1),
            new Message(Role.TOOL, List.of(chat.messages().get(2).content().get(0)), null),
            Message.text(Role.USER, "Thanks")));
        assertThat(back.toolChoice()).isEqualTo(new ToolChoice.Named("get_weather"));
        assertThat(back.tools().get(0).strict()).as("another dialect's tool is not made strict").isFalse();
    }

    @Test
    void jsonSchemaFormatRoundTrips()
    {
        ChatRequest request = CODEC.decodeRequest(Golden.fixture("request-json-schema.json"));
        ResponseFormat format = request.responseFormat();
        assertThat(format.type()).isEqualTo(ResponseFormat.Type.JSON_SCHEMA);
        assertThat(format.name()).isEqualTo("calendar_event");
        assertThat(format.strict()).isTrue();
        assertThat(format.schema().get("required")).hasSize(3);

        Golden.assertJson(CODEC.encodeRequest(request), "request-json-schema.encoded.json");
    }

    @Test
    void peekFindsModelAndStreamWithoutRequiringMessages()
    {
        RequestPeek peek = CODEC.peek("{\"input\":\"hi\",\"model\":\"gpt-4.1\",\"stream\":true}".getBytes(StandardCharsets.UTF_8));
        assertThat(peek.model()).isEqualTo("gpt-4.1");
        assertThat(peek.stream()).isTrue();
    }

    @ParameterizedTest
    @ValueSource(strings = {"web_search", "web_search_preview", "file_search", "code_interpreter", "computer_use_preview",
        "image_generation", "mcp", "local_shell"})
    void refusesBuiltInToolsByName(String type)
    {
        GatewayException e = refusal("{\"model\":\"gpt-4.1\",\"input\":\"hi\",\"tools\":[{\"type\":\"function\"," +
            "\"name\":\"f\"},{\"type\":\"" + type + "\"}]}");
        assertThat(e.kind()).isEqualTo(ErrorKind.UNSUPPORTED);
        assertThat(e.status()).isEqualTo(400);
        assertThat(e.param()).isEqualTo("tools[1].type");
        assertThat(e.getMessage()).contains("\"" + type + "\"").contains("OpenAI runs itself");
    }

    @ParameterizedTest
    @ValueSource(strings = {"conversation", "prompt", "background"})
    void refusesWhatNeedsOpenAisStoredStateByName(String field)
    {
        GatewayException e = refusal("{\"model\":\"gpt-4.1\",\"input\":\"hi\",\"" + field + "\":\"resp_123\"}");
        assertThat(e.kind()).isEqualTo(ErrorKind.UNSUPPORTED);
        assertThat(e.param()).isEqualTo(field);
        assertThat(e.getMessage()).startsWith(field + ": ").contains("stored state");
    }

    @org.junit.jupiter.api.Test
    void aPreviousResponseLeftInTheBodyIsOneTheGatewayDoesNotHave()
    {
        // The server binding expands a stored one and removes the field: what reaches a translation is unknown.
        GatewayException e = refusal("{\"model\":\"gpt-4.1\",\"input\":\"hi\",\"previous_response_id\":\"resp_123\"}");
        assertThat(e.kind()).isEqualTo(ErrorKind.NOT_FOUND);
        assertThat(e.status()).isEqualTo(404);
        assertThat(e.getMessage()).startsWith("response \"resp_123\" not found");
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', textBlock = """
        {"input":"hi"}                                                               | model                     | INVALID_REQUEST
        {"model":"m"}                                                                | input                     | INVALID_REQUEST
        {"model":"m","input":7}                                                      | input                     | INVALID_REQUEST
        {"model":"m","input":[]}                                                     | input                     | INVALID_REQUEST
        {"model":"m","input":[{"role":"robot","content":"x"}]}                       | input[0].role             | INVALID_REQUEST
        {"model":"m","input":[{"role":"user","content":[{"type":"input_audio"}]}]}   | input[0].content[0].type  | UNSUPPORTED
        {"model":"m","input":[{"role":"user","content":[{"type":"input_text","text":5}]}]} | input[0].content[0].text | INVALID_REQUEST
        {"model":"m","input":[{"role":"user","content":[{"type":"input_image","file_id":"file-1"}]}]} | input[0].content[0].file_id | UNSUPPORTED
        {"model":"m","input":[{"type":"function_call","name":"f"}]}                  | input[0].call_id          | INVALID_REQUEST
        {"model":"m","input":[{"type":"function_call_output","call_id":"c","output":{}}]} | input[0].output     | INVALID_REQUEST
        {"model":"m","input":[{"type":"web_search_call","id":"ws_1"}]}               | input[0].type             | UNSUPPORTED
        {"model":"m","input":[{"type":"item_reference","id":"msg_1"}]}               | input[0].type             | UNSUPPORTED
        {"model":"m","input":"x","tools":[{"type":"function"}]}                      | tools[0].name             | INVALID_REQUEST
        {"model":"m","input":"x","tools":"f"}                                        | tools                     | INVALID_REQUEST
        {"model":"m","input":"x","tool_choice":"sometimes"}                          | tool_choice               | INVALID_REQUEST
        {"model":"m","input":"x","tool_choice":{"type":"file_search"}}               | tool_choice.type          | UNSUPPORTED
        {"model":"m","input":"x","temperature":"hot"}                                | temperature               | INVALID_REQUEST
        {"model":"m","input":"x","max_output_tokens":1.5}                            | max_output_tokens         | INVALID_REQUEST
        {"model":"m","input":"x","text":{"format":{"type":"json_schema","name":"n"}}} | text.format.schema       | INVALID_REQUEST
        {"model":"m","input":"x","text":{"verbosity":"low"}}                         | text.verbosity            | UNSUPPORTED
        {"model":"m","input":"x","metadata":{"k":1}}                                 | metadata.k                | INVALID_REQUEST
        {"model":"m","input":"x","stream":"yes"}                                     | stream                    | INVALID_REQUEST
        """)
    void refusesBadInputNamingTheField(String json, String param, ErrorKind kind)
    {
        GatewayException e = refusal(json);
        assertThat(e).as(json).isNotNull();
        assertThat(e.kind()).as(e.getMessage()).isEqualTo(kind);
        assertThat(e.status()).isEqualTo(400);
        assertThat(e.param()).as(e.getMessage()).isEqualTo(param);
        assertThat(e.getMessage()).startsWith(param + ": ");
    }
}
