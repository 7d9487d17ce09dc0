package dev.sluice.plugin.openai;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.NullNode;
import dev.sluice.api.ErrorKind;
import dev.sluice.api.GatewayException;
import dev.sluice.api.model.ChatRequest;
import dev.sluice.api.model.ContentPart;
import dev.sluice.api.model.Message;
import dev.sluice.api.model.ChatRequest.ResponseFormat;
import dev.sluice.api.model.Message.Role;
import dev.sluice.api.model.ChatRequest.Sampling;
import dev.sluice.api.model.Tool;
import dev.sluice.api.model.ChatRequest.ToolChoice;
import dev.sluice.support.json.Json;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvFileSource;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

class OpenAiRequestCodecTest
{
    private final OpenAiCodec codec = OpenAiCodec.INSTANCE;

    private ChatRequest decode(String json)
    {
        return codec.decodeRequest(json.getBytes(StandardCharsets.UTF_8));
    }

    private GatewayException decodeFails(String json)
    {
        return catchThrowableOfType(GatewayException.class, () -> decode(json));
    }

    /** A minimal valid request with {@code message} as its only message. */
    private GatewayException messageFails(String message)
    {
        return decodeFails("{\"model\":\"gpt-4o\",\"messages\":[" + message + "]}");
    }

    @ParameterizedTest
    @ValueSource(strings = {"request-multiturn.json", "request-tools.json", "request-tool-results.json", "request-images.json",
        "request-json-schema.json"})
    void roundTripReproducesTheFixture(String fixture)
    {
        byte[] body = Fixtures.bytes(fixture);
        byte[] encoded = codec.encodeRequest(codec.decodeRequest(body));
        Fixtures.assertSameJson(encoded, body);
        // And the encoded form is stable.
        assertThat(codec.encodeRequest(codec.decodeRequest(encoded))).isEqualTo(encoded);
    }

    @Test
    void fieldsAtOpenAiDefaultsAskForNothingAndAreNotKept()
    {
        ChatRequest r = codec.decodeRequest(("{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}],"
            + "\"n\":1,\"logprobs\":false,\"store\":false}").getBytes(java.nio.charset.StandardCharsets.UTF_8));
        assertThat(r.extensions()).isEmpty();
        ChatRequest kept = codec.decodeRequest(("{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}],"
            + "\"n\":3,\"logprobs\":true,\"store\":true}").getBytes(java.nio.charset.StandardCharsets.UTF_8));
        assertThat(kept.extensions()).containsOnlyKeys("n", "logprobs", "store");
    }

    @Test
    void decodesSystemPromptTurnsAndSampling()
    {
        ChatRequest r = codec.decodeRequest(Fixtures.bytes("request-multiturn.json"));

        assertThat(r.model()).isEqualTo("gpt-4o-mini");
        assertThat(r.system()).containsExactly(
            new ContentPart.Text("You are a terse assistant for a logistics company. Answer in one or two sentences."));
        assertThat(r.messages()).extracting(Message::role).containsExactly(Role.USER, Role.ASSISTANT, Role.USER);
        assertThat(r.messages().get(2)).isEqualTo(new Message(Role.USER,
            List.of(new ContentPart.Text("And when does it reach the customer in Liège? Réponds en français 🙏")),
                "dispatcher_7"));
        assertThat(r.sampling()).isEqualTo(new Sampling(0.2, 0.9, null, 256, List.of("\n\n", "END"), 0.1, 0.3, 42L));
        assertThat(r.stream()).isFalse();
        assertThat(r.user()).isEqualTo("user-8812");
        assertThat(r.metadata()).containsExactlyInAnyOrderEntriesOf(Map.of("tenant", "acme", "trace", "t-19"));
        assertThat(r.extensions()).containsOnlyKeys("n", "logit_bias", "service_tier", "store", "max_tokens");
        assertThat(r.extensions().get("max_tokens")).isEqualTo(NullNode.getInstance());
        assertThat(r.extensions().get("logit_bias")).isEqualTo(Fixtures.tree("{\"50256\":-100}"));
    }

    @Test
    void decodesToolsAndNamedToolChoiceWithSchemasIntact()
    {
        byte[] body = Fixtures.bytes("request-tools.json");
        ChatRequest r = codec.decodeRequest(body);
        JsonNode tools = Fixtures.tree(body).get("tools");

        assertThat(r.tools()).containsExactly(
            new Tool("get_weather", "Current weather for a city.", tools.get(0).get("function").get("parameters"), true, null),
            new Tool("convert_currency", "Converts an amount between ISO 4217 currencies.",
                tools.get(1).get("function").get("parameters"), null, null));
        assertThat(r.toolChoice()).isEqualTo(new ToolChoice.Named("get_weather"));
        assertThat(r.parallelToolCalls()).isTrue();
        assertThat(r.sampling().maxTokens()).isEqualTo(1024);
        assertThat(r.extensions()).containsOnlyKeys("reasoning_effort");
    }

    @Test
    void decodesAssistantToolCallsAndToolResultsKeepingArgumentsExact()
    {
        ChatRequest r = codec.decodeRequest(Fixtures.bytes("request-tool-results.json"));

        assertThat(r.system()).isEmpty();
        assertThat(r.messages().get(1)).isEqualTo(new Message(Role.ASSISTANT, List.of(
            new ContentPart.ToolCall("call_8f3kQ2mWcY1bN0", "get_weather", "{\"city\": \"Paris\", \"unit\": \"celsius\"}"),
            new ContentPart.ToolCall("call_Zp91xAq7LrT3eE", "get_weather", "{\"city\":\"東京\",\"unit\":\"celsius\"}")), null));
        assertThat(r.messages().get(2)).isEqualTo(new Message(Role.TOOL, List.of(new ContentPart.ToolResult("call_8f3kQ2mWcY1bN0",
            List.of(new ContentPart.Text("{\"temp\": 18, \"sky\": \"overcast\"}")), false, null)), null));
        assertThat(r.toolChoice()).isEqualTo(new ToolChoice.Auto());
        assertThat(r.stream()).isTrue();
        assertThat(r.includeUsage()).isTrue();
    }

    @Test
    void decodesImagePartsKeepingDataUrlsAsUrls()
    {
        ChatRequest r = codec.decodeRequest(Fixtures.bytes("request-images.json"));

        List<ContentPart> parts = r.messages().get(0).content();
        assertThat(parts.get(0)).isEqualTo(new ContentPart.Text("Compare these two charts. Which quarter grew faster?"));
        assertThat(parts.get(1))
            .isEqualTo(new ContentPart.Image("https://example.com/charts/q3-revenue.png", null, null, "high", null));
        ContentPart.Image inline = (ContentPart.Image)parts.get(2);
        assertThat(inline.url()).startsWith("data:image/png;base64,iVBORw0KGgo");
        assertThat(inline.data()).isNull();
        assertThat(inline.detail()).isNull();
    }

    @Test
    void decodesJsonSchemaResponseFormat()
    {
        byte[] body = Fixtures.bytes("request-json-schema.json");
        ChatRequest r = codec.decodeRequest(body);
        JsonNode schema = Fixtures.tree(body).get("response_format").get("json_schema").get("schema");

        assertThat(r.responseFormat())
            .isEqualTo(new ResponseFormat(ResponseFormat.Type.JSON_SCHEMA, "calendar_event", schema, true));
        assertThat(r.sampling().temperature()).isEqualTo(0.0);
    }

    @Test
    void leadingDeveloperAndSystemMessagesBecomeTheSystemPromptAndLaterOnesStayInPlace()
    {
        ChatRequest r = decode("""
            {"model":"o3","messages":[
              {"role":"developer","content":"Be brief."},
              {"role":"system","content":[{"type":"text","text":"Cite sources."}]},
              {"role":"user","content":"hi"},
              {"role":"developer","content":"Now switch to French."},
              {"role":"user","content":"again"}]}""");

        assertThat(r.system()).containsExactly(new ContentPart.Text("Be brief."), new ContentPart.Text("Cite sources."));
        assertThat(r.messages()).extracting(Message::role).containsExactly(Role.USER, Role.SYSTEM, Role.USER);
        assertThat(r.messages().get(1).content()).containsExactly(new ContentPart.Text("Now switch to French."));

        JsonNode encoded = Fixtures.tree(codec.encodeRequest(r));
        assertThat(encoded.get("messages").get(0)).isEqualTo(Fixtures.tree(
            "{\"role\":\"system\",\"content\":[{\"type\":\"text\",\"text\":\"Be brief.\"},"
                + "{\"type\":\"text\",\"text\":\"Cite sources.\"}]}"));
        assertThat(encoded.get("messages").get(2))
            .isEqualTo(Fixtures.tree("{\"role\":\"system\",\"content\":\"Now switch to French.\"}"));
    }

    @Test
    void maxCompletionTokensIsTheDefaultSpellingForRequestsFromOtherDialects()
    {
        ChatRequest r = new ChatRequest("gpt-4o", List.of(), List.of(Message.text(Role.USER, "hi")), List.of(), null, null,
            new Sampling(null, null, 40, 100, List.of(), null, null, null), null, false, false, null, null, null);

        JsonNode encoded = Fixtures.tree(codec.encodeRequest(r));

        assertThat(encoded.get("max_completion_tokens").intValue()).isEqualTo(100);
        assertThat(encoded.has("max_tokens")).isFalse();
        assertThat(encoded.has("top_k")).as("OpenAI has no top_k").isFalse();
    }

    @Test
    void keepsBothTokenCapsWhenTheClientSentBoth()
    {
        String json = "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}],\"max_tokens\":10,"
            + "\"max_completion_tokens\":20}";
        ChatRequest r = decode(json);
        assertThat(r.sampling().maxTokens()).isEqualTo(20);
        Fixtures.assertSameJson(codec.encodeRequest(r), json.getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void aChangedTokenCapIsWrittenUnderTheClientsSpelling()
    {
        ChatRequest r = decode("{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}],\"max_tokens\":4000}");
        Sampling s = r.sampling();
        ChatRequest clamped = new ChatRequest(r.model(), r.system(), r.messages(), r.tools(), r.toolChoice(),
            r.parallelToolCalls(),
            new Sampling(s.temperature(), s.topP(), s.topK(), 500, s.stop(), s.presencePenalty(), s.frequencyPenalty(), s.seed()),
            r.responseFormat(), r.stream(), r.includeUsage(), r.user(), r.metadata(), r.extensions());

        Fixtures.assertSameJson(codec.encodeRequest(clamped),
            "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}],\"max_tokens\":500}"
                .getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void encodesCanonicalContentFromOtherDialects()
    {
        // The shape an Anthropic-speaking client produces: tool results inside a user turn, base64 images.
        ChatRequest r = new ChatRequest("gpt-4o", List.of(new ContentPart.Text("sys")), List.of(
            new Message(Role.ASSISTANT, List.of(new ContentPart.Thinking("hmm", "sig"), new ContentPart.Text("Let me check."),
                new ContentPart.ToolCall("toolu_1", "lookup", "{\"q\":1}")), null),
            new Message(Role.USER, List.of(
                new ContentPart.ToolResult("toolu_1", List.of(new ContentPart.Text("42")), false, null),
                new ContentPart.Text("And this picture?"),
                new ContentPart.Image(null, "image/jpeg", "AAAA", null, null)), null)),
            List.of(), new ToolChoice.Required(), null, Sampling.DEFAULTS,
            new ResponseFormat(ResponseFormat.Type.JSON_SCHEMA, null, Json.MAPPER.createObjectNode(), null), true, true,
            null, null, null);

        Fixtures.assertSameJson(codec.encodeRequest(r), """
            {"model":"gpt-4o","messages":[
              {"role":"system","content":"sys"},
              {"role":"assistant","content":"Let me check.","tool_calls":[
                {"id":"toolu_1","type":"function","function":{"name":"lookup","arguments":"{\\"q\\":1}"}}]},
              {"role":"tool","tool_call_id":"toolu_1","content":"42"},
              {"role":"user","content":[{"type":"text","text":"And this picture?"},
                {"type":"image_url","image_url":{"url":"data:image/jpeg;base64,AAAA"}}]}],
             "tool_choice":"required",
             "response_format":{"type":"json_schema","json_schema":{"name":"response","schema":{}}},
             "stream":true,"stream_options":{"include_usage":true}}""".getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void refusesToEncodeAnImageInAToolResult()
    {
        ContentPart.Image image = new ContentPart.Image("https://x/y.png", null, null, null, null);
        Message call = new Message(Role.ASSISTANT, List.of(new ContentPart.ToolCall("t1", "draw", "{}")), null);
        Message toolResult = new Message(Role.USER, List.of(new ContentPart.ToolResult("t1", List.of(image), false, null)), null);
        ChatRequest r = new ChatRequest("gpt-4o", List.of(), List.of(call, toolResult), List.of(), null, null, null, null, false,
            false, null, null, null);

        GatewayException e = catchThrowableOfType(GatewayException.class, () -> codec.encodeRequest(r));
        assertThat(e.kind()).isEqualTo(ErrorKind.UNSUPPORTED);
        assertThat(e.getMessage()).startsWith("messages[1].content[0][0]: an image cannot be sent to an openai upstream here");
    }

    @Test
    void rejectsUnsupportedContentPartNamingTypeAndPath()
    {
        GatewayException e = decodeFails("""
            {"model":"gpt-4o-audio-preview","messages":[
              {"role":"system","content":"s"},
              {"role":"user","content":"a"},
              {"role":"user","content":[{"type":"text","text":"listen"},{"type":"input_audio","input_audio":{"data":"UklG",
               "format":"wav"}}]}]}""");

        assertThat(e.kind()).isEqualTo(ErrorKind.UNSUPPORTED);
        assertThat(e.status()).isEqualTo(400);
        assertThat(e.getMessage()).isEqualTo("messages[2].content[1].type: \"input_audio\" is not supported");
        assertThat(e.param()).isEqualTo("messages[2].content[1].type");
    }

    @Test
    void rejectsFilePartsAndRefusalPartsInRequests()
    {
        assertThat(messageFails("{\"role\":\"user\",\"content\":[{\"type\":\"file\",\"file\":{\"file_id\":\"file-1\"}}]}")
            .getMessage())
            .isEqualTo("messages[0].content[0].type: \"file\" is not supported");
        assertThat(messageFails("{\"role\":\"assistant\",\"content\":[{\"type\":\"refusal\",\"refusal\":\"no\"}]}").getMessage())
            .isEqualTo("messages[0].content[0].type: \"refusal\" is not supported");
        assertThat(messageFails("{\"role\":\"assistant\",\"content\":null,\"refusal\":\"I can't help with that.\"}").getMessage())
            .isEqualTo("messages[0].refusal: is not supported in request messages");
    }

    @Test
    void rejectsUnknownMessageFieldsRatherThanDroppingThem()
    {
        GatewayException e = messageFails("{\"role\":\"user\",\"content\":\"hi\",\"cache_control\":{\"type\":\"ephemeral\"}}");
        assertThat(e.kind()).isEqualTo(ErrorKind.UNSUPPORTED);
        assertThat(e.getMessage()).isEqualTo("messages[0].cache_control: is not supported");
    }

    @Test
    void acceptsNullsAndEmptyAnnotationsThatSdksEchoBack()
    {
        ChatRequest r = decode("""
            {"model":"m","messages":[{"role":"user","content":"q"},
              {"role":"assistant","content":"a","refusal":null,"annotations":[],"audio":null,"function_call":null,
               "tool_calls":null}],
             "temperature":null,"stop":null,"tools":null}""");
        assertThat(r.messages().get(1)).isEqualTo(Message.text(Role.ASSISTANT, "a"));
        assertThat(r.sampling()).isEqualTo(Sampling.DEFAULTS);
    }

    @ParameterizedTest
    @CsvFileSource(resources = "/fixtures/bad-requests.psv", delimiter = '|', quoteCharacter = '`')
    void rejectsWrongTypesNamingThePath(String body, String message, String param)
    {
        GatewayException e = decodeFails(body);
        assertThat(e.kind()).isEqualTo(ErrorKind.INVALID_REQUEST);
        assertThat(e.getMessage()).isEqualTo(message);
        assertThat(e.param()).isEqualTo(param);
    }

    @Test
    void rejectsUnsupportedToolTypesAndToolChoices()
    {
        assertThat(decodeFails("{\"model\":\"m\",\"messages\":[],\"tools\":[{\"type\":\"custom\",\"custom\":{\"name\":\"x\"}}]}")
            .getMessage())
            .isEqualTo("tools[0].type: \"custom\" is not supported");
        assertThat(decodeFails("{\"model\":\"m\",\"messages\":[],\"tool_choice\":{\"type\":\"allowed_tools\"}}").getMessage())
            .isEqualTo("tool_choice.type: \"allowed_tools\" is not supported");
        assertThat(messageFails("{\"role\":\"function\",\"name\":\"f\",\"content\":\"x\"}").getMessage())
            .startsWith("messages[0].role: \"function\" is not supported");
    }

    @Test
    void rejectsMalformedAndTooDeepBodiesLikePeek()
    {
        assertThat(decodeFails("{\"model\":\"m\",\"messages\":[}").getMessage())
            .startsWith("request body is not valid JSON: Unexpected close marker '}'")
                .endsWith("expected ']' at line 1, column 26");
        String deep = "[".repeat(100) + "]".repeat(100);
        assertThat(decodeFails("{\"model\":\"m\",\"messages\":[],\"x\":" + deep + "}").getMessage())
            .startsWith("request body is nested too deeply");
        assertThat(decodeFails("[]").getMessage()).isEqualTo("request body: value: an array (expected: an object)");
    }
}
