package dev.sluice.plugin.gemini;

import com.fasterxml.jackson.databind.JsonNode;
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

import java.util.List;
import java.util.Map;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

class GeminiRequestCodecTest
{
    private static final String PNG =
        "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";
    private static final String SIGNATURE = "CiQBVKhc7vB1x4ZpQm2Yw9Hn0LrS3TtUuVvWwXxYyZz0123AbCdEf==";

    private final GeminiCodec codec = GeminiCodec.INSTANCE;

    private ChatRequest decode(String json)
    {
        return codec.decodeRequest(Fixtures.utf8(json), new RequestPeek("gemini-2.5-flash", false, -1, -1));
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
        return new ChatRequest("gemini-2.5-flash", List.of(), messages, List.of(), null, null, null, null, false, false,
            null, null, null);
    }

    private static JsonNode encodedContents(ChatRequest request)
    {
        return Fixtures.tree(GeminiCodec.INSTANCE.encodeRequest(request)).get("contents");
    }

    @ParameterizedTest
    @ValueSource(strings = {"request-multiturn.json", "request-tools.json"})
    void roundTripReproducesTheFixture(String fixture)
    {
        byte[] body = Fixtures.bytes(fixture);
        RequestPeek peek = new RequestPeek("gemini-2.5-pro", true, -1, -1);
        byte[] encoded = codec.encodeRequest(codec.decodeRequest(body, peek));
        Fixtures.assertSameJson(encoded, body);
        // And the encoded form is stable.
        assertThat(codec.encodeRequest(codec.decodeRequest(encoded))).isEqualTo(encoded);
    }

    @Test
    void snakeCaseFieldsDecodeLikeCamelCaseAndTheirSchemasBecomeJsonSchema()
    {
        ChatRequest snake = codec.decodeRequest(Fixtures.bytes("request-snake-case.json"));
        byte[] encoded = codec.encodeRequest(snake);

        Fixtures.assertSameJson(encoded, Fixtures.bytes("request-snake-case.encoded.json"));
        assertThat(codec.decodeRequest(encoded)).isEqualTo(snake);
        assertThat(snake.system()).containsExactly(new ContentPart.Text("You are a cat. Your name is Neko."));
        assertThat(((ContentPart.Image)snake.messages().get(0).content().get(1)).mediaType()).isEqualTo("image/jpeg");
        assertThat(snake.toolChoice()).isEqualTo(new ToolChoice.Auto());
        assertThat(snake.sampling().maxTokens()).isEqualTo(100);
        assertThat(snake.responseFormat().type()).isEqualTo(ResponseFormat.Type.JSON_SCHEMA);
        assertThat(snake.extensions()).containsOnlyKeys("generationConfig.thinkingConfig");
        assertThat(snake.tools().get(0).parameters()).isEqualTo(Fixtures.tree("{\"type\":\"object\",\"properties\":"
            + "{\"location\":{\"type\":\"string\"},\"movie\":{\"type\":[\"string\",\"null\"]}},"
            + "\"required\":[\"location\"]}"));
    }

    @Test
    void decodesSystemInstructionTurnsAndSamplingWithTheModelAndStreamFromThePeek()
    {
        byte[] body = Fixtures.bytes("request-multiturn.json");
        ChatRequest r = codec.decodeRequest(body, new RequestPeek("gemini-2.5-flash", true, -1, -1));

        assertThat(r.model()).isEqualTo("gemini-2.5-flash");
        assertThat(r.stream()).isTrue();
        assertThat(r.includeUsage()).as("Gemini always reports usage").isTrue();
        assertThat(r.system()).containsExactly(
            new ContentPart.Text("You are a terse assistant for a logistics company."),
            new ContentPart.Text("Answer in one or two sentences."));
        assertThat(r.messages()).containsExactly(
            Message.text(Role.USER, "Where is parcel 7731 now?"),
            Message.text(Role.ASSISTANT, "It left Antwerp at 06:10 and is on its way to Liège."),
            new Message(Role.USER, List.of(
                new ContentPart.Text("And when does it reach the customer in Liège? Réponds en français 🙏"),
                new ContentPart.Image(null, "image/png", PNG, null, null)), null));
        assertThat(r.sampling()).isEqualTo(new Sampling(0.2, 0.9, 40, 256, List.of("\n\n", "END"), 0.1, 0.3, 42L));
        assertThat(r.tools()).isEmpty();
        assertThat(r.toolChoice()).isNull();
        assertThat(r.responseFormat()).isNull();
        assertThat(r.extensions())
            .containsOnlyKeys("safetySettings", "cachedContent", "generationConfig.thinkingConfig");
        assertThat(r.extensions().get("generationConfig.thinkingConfig"))
            .isEqualTo(Fixtures.tree("{\"thinkingBudget\":1024,\"includeThoughts\":true}"));
        assertThat(r.extensions().get("cachedContent").textValue()).isEqualTo("cachedContents/7f3kq2mwcy1b");
    }

    @Test
    void decodeWithoutAPeekHasNoModelAndNoStream()
    {
        ChatRequest r = codec.decodeRequest(Fixtures.bytes("request-multiturn.json"));
        assertThat(r.model()).isEmpty();
        assertThat(r.stream()).isFalse();
    }

    @Test
    void dropsTheEmptyTextOfReplayedFinishChunksFromModelTurns()
    {
        // A google-genai chat history after a stream: one model content per chunk, the finish chunk's text empty.
        ChatRequest r = decode("{\"contents\":[{\"role\":\"user\",\"parts\":[{\"text\":\"Hi\"}]},"
            + "{\"role\":\"model\",\"parts\":[{\"text\":\"Hel\"}]},{\"role\":\"model\",\"parts\":[{\"text\":\"lo\"},"
            + "{\"text\":\"\"}]},{\"role\":\"model\",\"parts\":[{\"text\":\"\"}]},"
            + "{\"role\":\"user\",\"parts\":[{\"text\":\"Again\"}]}]}");

        assertThat(r.messages()).containsExactly(Message.text(Role.USER, "Hi"), Message.text(Role.ASSISTANT, "Hel"),
            Message.text(Role.ASSISTANT, "lo"), Message.text(Role.USER, "Again"));
    }

    @Test
    void acceptsTheEmptyPartsListTheSdkWritesIntoFunctionResponses()
    {
        // What google-genai's Part.fromFunctionResponse(name, response) sends.
        ChatRequest r = decode("{\"contents\":[{\"role\":\"model\",\"parts\":[{\"functionCall\":{\"name\":\"f\","
            + "\"args\":{}}}]},{\"role\":\"user\",\"parts\":[{\"functionResponse\":{\"name\":\"f\",\"parts\":[],"
            + "\"response\":{\"result\":\"ok\"}}}]}]}");

        assertThat(r.messages().get(1).content()).containsExactly(
            new ContentPart.ToolResult("call_0", List.of(new ContentPart.Text("ok")), false, null));
    }

    @Test
    void decodesFunctionCallsWithSynthesisedIdsAndPairsResponsesByNameInOrder()
    {
        byte[] body = Fixtures.bytes("request-tools.json");
        ChatRequest r = codec.decodeRequest(body);
        JsonNode declarations = Fixtures.tree(body).get("tools").get(0).get("functionDeclarations");

        assertThat(r.messages()).extracting(Message::role)
            .containsExactly(Role.USER, Role.ASSISTANT, Role.TOOL, Role.ASSISTANT, Role.USER);
        assertThat(r.messages().get(1).content()).containsExactly(
            new ContentPart.Thinking("The user asks about two cities, so I will call get_weather twice.", null),
            new ContentPart.Thinking("", SIGNATURE),
            new ContentPart.ToolCall("call_0", "get_weather", "{\"city\":\"Paris\",\"unit\":\"celsius\"}"),
            new ContentPart.ToolCall("call_1", "get_weather", "{\"city\":\"東京\",\"unit\":\"celsius\"}"));
        assertThat(r.messages().get(2).content()).containsExactly(
            new ContentPart.ToolResult("call_0", List.of(new ContentPart.Text("{\"temp\":18,\"sky\":\"overcast\"}")),
                false, null),
            new ContentPart.ToolResult("call_1", List.of(new ContentPart.Text("24 °C, clear")), false, null));
        assertThat(r.tools()).containsExactly(
            new Tool("get_weather", "Current weather for a city.", declarations.get(0).get("parametersJsonSchema"),
                null, null),
            new Tool("book_table", "Books a restaurant table.", declarations.get(1).get("parametersJsonSchema"),
                null, null));
        assertThat(r.toolChoice()).isEqualTo(new ToolChoice.Named("book_table"));
        assertThat(r.responseFormat()).isEqualTo(new ResponseFormat(ResponseFormat.Type.JSON_SCHEMA, null,
            Fixtures.tree("{\"type\":\"object\",\"properties\":{\"booked\":{\"type\":\"boolean\"}}}"), null));
        assertThat(r.extensions()).containsOnlyKeys("tools.googleSearch");
    }

    @Test
    void idsSentByTheClientWinAndResponsesFindTheirCallById()
    {
        ChatRequest r = decode("""
            {"contents":[
              {"role":"user","parts":[{"text":"go"}]},
              {"role":"model","parts":[{"functionCall":{"id":"a1","name":"f","args":{}}},
                                       {"functionCall":{"name":"f"}},
                                       {"functionCall":{"id":"c3","name":"g","args":{"x":1}}}]},
              {"role":"user","parts":[{"functionResponse":{"id":"c3","name":"g","response":{"ok":true}}},
                                      {"functionResponse":{"name":"f","response":{"result":"first"}}},
                                      {"functionResponse":{"name":"f","response":{"result":"second"}}},
                                      {"functionResponse":{"name":"f","response":{"result":"orphan"}}}]}]}""");

        assertThat(r.messages().get(1).content()).extracting(p -> ((ContentPart.ToolCall)p).id())
            .containsExactly("a1", "call_1", "c3");
        assertThat(r.messages().get(1).content().get(1)).isEqualTo(new ContentPart.ToolCall("call_1", "f", "{}"));
        assertThat(r.messages().get(2).content()).extracting(p -> ((ContentPart.ToolResult)p).toolCallId())
            .as("by id, then the earliest unanswered call of the name, then a fresh id for a response without a call")
            .containsExactly("c3", "a1", "call_1", "call_3");
    }

    @Test
    void functionResponseObjectsBecomeToolResultTextInvertibly()
    {
        ChatRequest r = decode("""
            {"contents":[{"role":"model","parts":[{"functionCall":{"name":"f"}},{"functionCall":{"name":"f"}},
                                                  {"functionCall":{"name":"f"}},{"functionCall":{"name":"f"}}]},
              {"role":"user","parts":[
                {"functionResponse":{"name":"f","response":{"result":"plain text"}}},
                {"functionResponse":{"name":"f","response":{"error":"city not found"}}},
                {"functionResponse":{"name":"f","response":{"result":"{\\"looks\\":\\"like an object\\"}"}}},
                {"functionResponse":{"name":"f","response":{"output":[1,2],"note":"x"}}}]}]}""");

        assertThat(r.messages().get(1).content()).containsExactly(
            new ContentPart.ToolResult("call_0", List.of(new ContentPart.Text("plain text")), false, null),
            new ContentPart.ToolResult("call_1", List.of(new ContentPart.Text("city not found")), true, null),
            new ContentPart.ToolResult("call_2",
                List.of(new ContentPart.Text("{\"result\":\"{\\\"looks\\\":\\\"like an object\\\"}\"}")), false, null),
            new ContentPart.ToolResult("call_3", List.of(new ContentPart.Text("{\"output\":[1,2],\"note\":\"x\"}")),
                false, null));
        JsonNode parts = encodedContents(r).get(1).get("parts");
        assertThat(parts.get(0).at("/functionResponse/response"))
            .isEqualTo(Fixtures.tree("{\"result\":\"plain text\"}"));
        assertThat(parts.get(1).at("/functionResponse/response"))
            .isEqualTo(Fixtures.tree("{\"error\":\"city not found\"}"));
        assertThat(parts.get(2).at("/functionResponse/response"))
            .isEqualTo(Fixtures.tree("{\"result\":\"{\\\"looks\\\":\\\"like an object\\\"}\"}"));
        assertThat(parts.get(3).at("/functionResponse/response"))
            .isEqualTo(Fixtures.tree("{\"output\":[1,2],\"note\":\"x\"}"));
    }

    @Test
    void keepsWhatTheCanonicalModelCannotSayAsExtensions()
    {
        ChatRequest r = decode("""
            {"contents":[{"parts":[{"text":"Pick a colour"}]}],
             "tools":[{"codeExecution":{},"functionDeclarations":[{"name":"a"},{"name":"b"}]},{"url_context":{}}],
             "toolConfig":{"functionCallingConfig":{"mode":"ANY","allowedFunctionNames":["a","b"]},
                           "retrievalConfig":{"languageCode":"fr"}},
             "generationConfig":{"responseMimeType":"text/x.enum",
                                 "responseSchema":{"type":"STRING","enum":["red","blue"]},
                                 "responseModalities":["TEXT"]},
             "labels":{"team":"a"}}""");

        assertThat(r.messages()).containsExactly(Message.text(Role.USER, "Pick a colour"));
        assertThat(r.toolChoice()).isEqualTo(new ToolChoice.Required());
        assertThat(r.responseFormat()).isNull();
        assertThat(r.extensions()).containsOnlyKeys("labels", "tools.codeExecution", "tools.urlContext",
            "toolConfig.functionCallingConfig.allowedFunctionNames", "toolConfig.retrievalConfig",
            "generationConfig.responseMimeType", "generationConfig.responseSchema",
            "generationConfig.responseModalities");

        JsonNode encoded = Fixtures.tree(codec.encodeRequest(r));
        assertThat(encoded.get("toolConfig")).isEqualTo(Fixtures.tree("""
            {"functionCallingConfig":{"mode":"ANY","allowedFunctionNames":["a","b"]},
             "retrievalConfig":{"languageCode":"fr"}}"""));
        assertThat(encoded.get("tools")).isEqualTo(Fixtures.tree("""
            [{"functionDeclarations":[{"name":"a"},{"name":"b"}]},{"codeExecution":{}},{"urlContext":{}}]"""));
        assertThat(encoded.get("generationConfig")).isEqualTo(Fixtures.tree("""
            {"responseMimeType":"text/x.enum","responseSchema":{"type":"STRING","enum":["red","blue"]},
             "responseModalities":["TEXT"]}"""));
        assertThat(encoded.get("labels")).isEqualTo(Fixtures.tree("{\"team\":\"a\"}"));
    }

    @Test
    void validatedModeReadsAsAutoAndTravelsAsAnExtensionThatOtherDialectsRefuse()
    {
        ChatRequest r = decode("{\"contents\":[{\"parts\":[{\"text\":\"Hi\"}]}],"
            + "\"tools\":[{\"functionDeclarations\":[{\"name\":\"a\"}]}],"
            + "\"toolConfig\":{\"functionCallingConfig\":{\"mode\":\"VALIDATED\"}}}");

        assertThat(r.toolChoice()).isEqualTo(new ToolChoice.Auto());
        assertThat(Fixtures.tree(codec.encodeRequest(r)).at("/toolConfig/functionCallingConfig/mode").textValue())
            .isEqualTo("VALIDATED");
        GatewayException e = catchThrowableOfType(GatewayException.class,
            () -> Translation.withoutForeignExtensions(r, "gemini", "openai", Set.of()));
        assertThat(e.getMessage())
            .isEqualTo("toolConfig.functionCallingConfig.mode: is a field of the gemini dialect that cannot be translated to openai"
            + " (an operator can allow dropping it: drop_unsupported)");
    }

    @Test
    void encodesCanonicalContentInOpenAiShapeAsGemini()
    {
        ChatRequest r = openAiShaped();

        Fixtures.assertSameJson(codec.encodeForeignRequest(r), Fixtures.bytes("encoded-from-openai.json"));
        // The placeholder signature is only for history from other dialects.
        assertThat(Fixtures.tree(codec.encodeRequest(r)).at("/contents/1/parts/0").has("thoughtSignature")).isFalse();
    }

    /**
     * What the OpenAI decoder makes of a Chat Completions request with tools, tool results, a data URL and a late
     * system message.
     */
    private static ChatRequest openAiShaped()
    {
        JsonNode schema = Fixtures.tree("""
            {"type":"object",
             "properties":{"city":{"type":"string"},"unit":{"type":"string","enum":["celsius","fahrenheit"]}},
             "required":["city","unit"],"additionalProperties":false}""");
        return new ChatRequest("gpt-4o", List.of(new ContentPart.Text("You are a helpful travel agent.")), List.of(
            new Message(Role.USER, List.of(
                new ContentPart.Text("What's the weather in Paris and in Tokyo? Here is my itinerary."),
                new ContentPart.Image("data:image/png;base64," + PNG, null, null, "high", null)), null),
            new Message(Role.ASSISTANT, List.of(
                new ContentPart.ToolCall("call_8f3kQ2mWcY1bN0", "get_weather",
                    "{\"city\": \"Paris\", \"unit\": \"celsius\"}"),
                new ContentPart.ToolCall("call_Zp91xAq7LrT3eE", "get_weather",
                    "{\"city\":\"東京\",\"unit\":\"celsius\"}")), null),
            new Message(Role.TOOL, List.of(new ContentPart.ToolResult("call_8f3kQ2mWcY1bN0",
                List.of(new ContentPart.Text("{\"temp\": 18, \"sky\": \"overcast\"}")), false, null)), null),
            new Message(Role.TOOL, List.of(new ContentPart.ToolResult("call_Zp91xAq7LrT3eE",
                List.of(new ContentPart.Text("24 °C and clear")), false, null)), null),
            Message.text(Role.ASSISTANT, "Paris: 18 °C and overcast. Tokyo: 24 °C and clear."),
            Message.text(Role.SYSTEM, "Answer in French from now on."),
            Message.text(Role.USER, "Merci ! Lequel est le plus chaud ?")),
            List.of(new Tool("get_weather", "Current weather for a city.", schema, true, null)), new ToolChoice.Auto(),
            true,
            new Sampling(0.7, null, null, 512, List.of("END"), null, null, 7L),
            new ResponseFormat(ResponseFormat.Type.JSON_OBJECT, null, null, null), true, true, "user-8812",
            Map.of("tenant", "acme"), null);
    }

    @Test
    void foreignHistoryLosesItsReasoningAndGetsOnePlaceholderPerModelTurn()
    {
        ChatRequest r = request(List.of(
            Message.text(Role.USER, "go"),
            new Message(Role.ASSISTANT, List.of(new ContentPart.Thinking("hmm", "anthropic-signature"),
                new ContentPart.Text("Checking."), new ContentPart.ToolCall("t1", "f", "{}"),
                new ContentPart.ToolCall("t2", "f", "{}")), null),
            new Message(Role.USER, List.of(
                new ContentPart.ToolResult("t1", List.of(new ContentPart.Text("1")), false, null),
                new ContentPart.ToolResult("t2", List.of(new ContentPart.Text("2")), false, null)), null),
            new Message(Role.ASSISTANT, List.of(new ContentPart.ToolCall("t3", "f", "{}")), null),
            new Message(Role.USER, List.of(
                new ContentPart.ToolResult("t3", List.of(new ContentPart.Text("3")), false, null)), null)));

        JsonNode contents = Fixtures.tree(codec.encodeForeignRequest(r)).get("contents");

        assertThat(contents.get(1).get("parts")).isEqualTo(Fixtures.tree("""
            [{"text":"Checking."},
             {"functionCall":{"name":"f","args":{}},"thoughtSignature":"skip_thought_signature_validator"},
             {"functionCall":{"name":"f","args":{}}}]"""));
        assertThat(contents.get(3).get("parts")).isEqualTo(Fixtures.tree("""
            [{"functionCall":{"name":"f","args":{}},"thoughtSignature":"skip_thought_signature_validator"}]"""));
    }

    @Test
    void encodesReasoningAsThoughtPartsAndSignaturesOnThePartAfterThem()
    {
        ChatRequest r = request(List.of(new Message(Role.ASSISTANT, List.of(
            new ContentPart.Thinking("Plan: one call.", "sig-1"),
            new ContentPart.Thinking("", "sig-2"),
            new ContentPart.ToolCall("c", "f", ""),
            new ContentPart.Text("Done."),
            new ContentPart.Thinking("", "sig-3")), null)));

        assertThat(encodedContents(r).get(0).get("parts")).isEqualTo(Fixtures.tree("""
            [{"text":"Plan: one call.","thought":true,"thoughtSignature":"sig-1"},
             {"functionCall":{"name":"f","args":{}},"thoughtSignature":"sig-2"},
             {"text":"Done."},
             {"text":"","thoughtSignature":"sig-3"}]"""));
    }

    @Test
    void mergesConsecutiveTurnsOfTheSameRoleSkipsEmptyOnesAndHoistsSystemMessages()
    {
        ChatRequest r = request(List.of(Message.text(Role.USER, "a"), Message.text(Role.SYSTEM, "be brief"),
            new Message(Role.ASSISTANT, List.of(), null), Message.text(Role.USER, "b"),
            Message.text(Role.ASSISTANT, "c"), Message.text(Role.ASSISTANT, "d")));

        JsonNode encoded = Fixtures.tree(codec.encodeRequest(r));

        assertThat(encoded.get("contents")).isEqualTo(Fixtures.tree("""
            [{"role":"user","parts":[{"text":"a"},{"text":"b"}]},
             {"role":"model","parts":[{"text":"c"},{"text":"d"}]}]"""));
        assertThat(encoded.get("systemInstruction")).isEqualTo(Fixtures.tree("{\"parts\":[{\"text\":\"be brief\"}]}"));
    }

    @Test
    void encodesImagesInlineOrAsGeminiFiles()
    {
        ChatRequest r = request(List.of(new Message(Role.USER, List.of(
            new ContentPart.Image("data:;base64," + PNG, null, null, null, null),
            new ContentPart.Image(null, null, "/9j/4AAQSkZJRg==", "low", null),
            new ContentPart.Image(null, "image/webp", "UklGRgAAAAA=", null, null),
            new ContentPart.Image("https://generativelanguage.googleapis.com/v1beta/files/abc123", "image/png", null,
                null, null),
            new ContentPart.Image("gs://bucket/cat.jpg", null, null, null, null)), null)));

        assertThat(encodedContents(r).get(0).get("parts")).isEqualTo(Fixtures.tree("""
            [{"inlineData":{"mimeType":"image/png","data":"%s"}},
             {"inlineData":{"mimeType":"image/jpeg","data":"/9j/4AAQSkZJRg=="}},
             {"inlineData":{"mimeType":"image/webp","data":"UklGRgAAAAA="}},
             {"fileData":{"mimeType":"image/png",
                          "fileUri":"https://generativelanguage.googleapis.com/v1beta/files/abc123"}},
             {"fileData":{"fileUri":"gs://bucket/cat.jpg"}}]""".formatted(PNG)));
    }

    @Test
    void encodesToolChoicesAndResponseFormats()
    {
        assertThat(toolConfig(new ToolChoice.None())).isEqualTo(Fixtures.tree("{\"mode\":\"NONE\"}"));
        assertThat(toolConfig(new ToolChoice.Required())).isEqualTo(Fixtures.tree("{\"mode\":\"ANY\"}"));
        assertThat(toolConfig(new ToolChoice.Named("f")))
            .isEqualTo(Fixtures.tree("{\"mode\":\"ANY\",\"allowedFunctionNames\":[\"f\"]}"));

        assertThat(generationConfig(new ResponseFormat(ResponseFormat.Type.TEXT, null, null, null)))
            .isEqualTo(Fixtures.tree("{\"responseMimeType\":\"text/plain\"}"));
        assertThat(generationConfig(new ResponseFormat(ResponseFormat.Type.JSON_SCHEMA, "event",
            Fixtures.tree("{\"type\":\"object\"}"), true)))
            .as("name and strict are dropped: Gemini has no name and always follows the schema")
            .isEqualTo(Fixtures.tree(
                "{\"responseMimeType\":\"application/json\",\"responseJsonSchema\":{\"type\":\"object\"}}"));
    }

    private JsonNode toolConfig(ToolChoice choice)
    {
        ChatRequest r = new ChatRequest("m", List.of(), List.of(Message.text(Role.USER, "Hi")),
            List.of(new Tool("f", null, null, null, null)), choice, null, null, null, false, false, null, null, null);
        return Fixtures.tree(codec.encodeRequest(r)).at("/toolConfig/functionCallingConfig");
    }

    private JsonNode generationConfig(ResponseFormat format)
    {
        ChatRequest r = new ChatRequest("m", List.of(), List.of(Message.text(Role.USER, "Hi")), List.of(), null, null, null,
            format, false, false, null, null, null);
        return Fixtures.tree(codec.encodeRequest(r)).get("generationConfig");
    }

    @Test
    void toolResultsBecomeFunctionResponsesNamedAfterTheirCall()
    {
        ChatRequest r = request(List.of(
            new Message(Role.ASSISTANT, List.of(new ContentPart.ToolCall("c1", "lookup", "{\"q\":1}"),
                new ContentPart.ToolCall("c2", "fetch", "{}")), null),
            new Message(Role.USER, List.of(
                new ContentPart.ToolResult("c2", List.of(new ContentPart.Text("[1,2]")), false, null),
                new ContentPart.ToolResult("c1", List.of(new ContentPart.Text("no such row")), true, null),
                new ContentPart.Text("and now?")), null)));

        assertThat(encodedContents(r).get(1).get("parts")).isEqualTo(Fixtures.tree("""
            [{"functionResponse":{"name":"fetch","response":{"result":"[1,2]"}}},
             {"functionResponse":{"name":"lookup","response":{"error":"no such row"}}},
             {"text":"and now?"}]"""));
    }

    // ---- refusals: decoding ----

    @ParameterizedTest
    @CsvFileSource(resources = "/fixtures/bad-requests.psv", delimiter = '|', quoteCharacter = '`')
    void rejectsBadRequestsNamingThePath(String body, String kind, String message, String param)
    {
        GatewayException e = decodeFails(body);
        assertThat(e.kind()).isEqualTo(ErrorKind.valueOf(kind));
        assertThat(e.status()).isEqualTo(400);
        assertThat(e.getMessage()).isEqualTo(message);
        assertThat(e.param()).isEqualTo(param);
    }

    @Test
    void rejectsMalformedAndTooDeepBodies()
    {
        assertThat(decodeFails("{\"contents\":[}").getMessage()).startsWith("request body is not valid JSON:");
        String deep = "[".repeat(100) + "]".repeat(100);
        assertThat(decodeFails("{\"contents\":[],\"x\":" + deep + "}").getMessage())
            .startsWith("request body is nested too deeply");
        assertThat(decodeFails("[]").getMessage()).isEqualTo("request body: value: an array (expected: an object)");
    }

    // ---- refusals: encoding ----

    @Test
    void refusesImageUrlsItWouldHaveToFetch()
    {
        GatewayException e = encodeFails(request(List.of(new Message(Role.USER,
            List.of(new ContentPart.Image("https://example.com/chart.png", null, null, null, null)), null))));
        assertThat(e.kind()).isEqualTo(ErrorKind.UNSUPPORTED);
        assertThat(e.getMessage())
            .isEqualTo("messages[0].content[0]: image URLs cannot be sent to gemini; send the image as a data URL");
        assertThat(e.param()).isEqualTo("messages[0].content[0]");
    }

    @Test
    void refusesDataUrlsThatAreNotBase64AndImagesOfUnknownType()
    {
        assertThat(encodeFails(request(List.of(new Message(Role.USER,
            List.of(new ContentPart.Image("data:image/svg+xml,%3Csvg%3E", null, null, null, null)), null))))
            .getMessage())
            .isEqualTo("messages[0].content[0]: a data URL that is not base64 cannot be sent to gemini");
        assertThat(encodeFails(request(List.of(new Message(Role.USER,
            List.of(new ContentPart.Image(null, null, "AAAA", null, null)), null)))).getMessage())
            .isEqualTo("messages[0].content[0]: an image without a media type cannot be sent to gemini");
    }

    @Test
    void refusesAToolResultWhoseCallIsNotInTheRequest()
    {
        GatewayException e = encodeFails(request(List.of(Message.text(Role.USER, "hi"), new Message(Role.TOOL,
            List.of(new ContentPart.ToolResult("call_gone", List.of(new ContentPart.Text("1")), false, null)), null))));
        assertThat(e.kind()).isEqualTo(ErrorKind.INVALID_REQUEST);
        assertThat(e.getMessage()).isEqualTo("messages[1].content[0]: tool result for tool call id \"call_gone\""
            + " (expected: the id of an earlier tool call; gemini needs its function name)");
        assertThat(e.param()).isEqualTo("messages[1].content[0]");
    }

    @ParameterizedTest
    @ValueSource(strings = {"[1,2]", "not json", "\"text\"", "{\"a\":1} trailing"})
    void refusesToolCallArgumentsThatAreNotAJsonObject(String arguments)
    {
        GatewayException e = encodeFails(request(List.of(new Message(Role.ASSISTANT,
            List.of(new ContentPart.ToolCall("c", "f", arguments)), null))));
        assertThat(e.kind()).isEqualTo(ErrorKind.UNSUPPORTED);
        assertThat(e.getMessage()).isEqualTo("messages[0].content[0].arguments: tool call arguments that are not a JSON"
            + " object cannot be sent to gemini (it takes arguments as an object)");
    }

    @Test
    void refusesParticipantNamesAndTurningParallelToolCallsOff()
    {
        Message named = new Message(Role.USER, List.of(new ContentPart.Text("hi")), "dispatcher_7");
        assertThat(encodeFails(request(List.of(named))).getMessage())
            .isEqualTo("messages[0].name: a participant name cannot be translated to gemini");
        ChatRequest serial = new ChatRequest("m", List.of(), List.of(), List.of(), null, false, null, null, false,
            false, null, null, null);
        GatewayException e = encodeFails(serial);
        assertThat(e.kind()).isEqualTo(ErrorKind.UNSUPPORTED);
        assertThat(e.getMessage())
            .isEqualTo("parallel_tool_calls: turning parallel tool calls off cannot be translated to gemini");
    }

    @Test
    void refusesPartsOutOfPlace()
    {
        ContentPart.Image image = new ContentPart.Image(null, "image/png", PNG, null, null);
        ChatRequest imageInSystem = new ChatRequest("m", List.of(image), List.of(), List.of(), null, null, null, null,
            false, false, null, null, null);
        assertThat(encodeFails(imageInSystem).getMessage())
            .isEqualTo("system[0]: an image cannot be sent to gemini in a system instruction (text only)");
        Message call = new Message(Role.ASSISTANT, List.of(new ContentPart.ToolCall("c", "f", "{}")), null);
        Message imageResult = new Message(Role.TOOL,
            List.of(new ContentPart.ToolResult("c", List.of(image), false, null)), null);
        assertThat(encodeFails(request(List.of(call, imageResult))).getMessage())
            .isEqualTo("messages[1].content[0].content[0]: an image in a tool result cannot be sent to gemini"
                + " (text only)");
        Message userCall = new Message(Role.USER, List.of(new ContentPart.ToolCall("c", "f", "{}")), null);
        assertThat(encodeFails(request(List.of(userCall))).getMessage())
            .isEqualTo("messages[0].content[0]: a tool call in a user message cannot be sent to gemini");
        assertThat(encodeFails(request(List.of(new Message(Role.ASSISTANT,
            List.of(new ContentPart.ToolResult("c", List.of(), false, null)), null)))).getMessage())
            .isEqualTo("messages[0].content[0]: a tool result in an assistant message cannot be sent to gemini");
        Message userThinking = new Message(Role.USER, List.of(new ContentPart.Thinking("x", null)), null);
        assertThat(encodeFails(request(List.of(userThinking))).getMessage())
            .isEqualTo("messages[0].content[0]: reasoning in a user message cannot be sent to gemini");
    }
}
