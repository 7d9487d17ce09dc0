package dev.sluice.plugin.anthropic;

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
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvFileSource;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

class AnthropicRequestCodecTest
{
    private static final String SCHEMA = "{\"type\":\"object\",\"properties\":{\"parcel_id\":{\"type\":\"string\"}},"
        + "\"required\":[\"parcel_id\"]}";

    private final AnthropicCodec codec = AnthropicCodec.INSTANCE;

    private ChatRequest decode(String json)
    {
        return codec.decodeRequest(Fixtures.utf8(json));
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
        return request(messages, Sampling.DEFAULTS, null);
    }

    private static ChatRequest request(List<Message> messages, Sampling sampling, ResponseFormat format)
    {
        return new ChatRequest("claude-sonnet-4-5", List.of(), messages, List.of(), null, null, sampling, format,
            false, false,
            null, null, null);
    }

    private static Message user(ContentPart... parts)
    {
        return new Message(Role.USER, List.of(parts), null);
    }

    private static Message assistant(ContentPart... parts)
    {
        return new Message(Role.ASSISTANT, List.of(parts), null);
    }

    @ParameterizedTest
    @ValueSource(strings = {"request-tools.json", "request-thinking.json"})
    void anthropicRequestRoundTripsExactly(String golden)
    {
        byte[] body = Fixtures.bytes(golden);
        byte[] encoded = codec.encodeRequest(codec.decodeRequest(body));
        Fixtures.assertExactJson(encoded, body);
        assertThat(codec.encodeRequest(codec.decodeRequest(encoded))).as("stable").isEqualTo(encoded);
    }

    @Test
    void decodesSystemBlocksContentToolsAndSamplingIntoCanonicalValues()
    {
        byte[] body = Fixtures.bytes("request-tools.json");
        JsonNode json = Fixtures.tree(body);
        ChatRequest r = codec.decodeRequest(body);

        assertThat(r.model()).isEqualTo("claude-sonnet-4-5-20250929");
        assertThat(r.system()).containsExactly(
            new ContentPart.Text("You are the dispatcher of a logistics company. Answer in one or two sentences.",
                Fixtures.tree("{\"type\":\"ephemeral\"}")),
            new ContentPart.Text("Today is Thursday 7 August."));
        assertThat(r.messages()).extracting(Message::role).containsExactly(Role.USER, Role.ASSISTANT, Role.USER);
        assertThat(r.messages().get(0).content()).containsExactly(
            new ContentPart.Text("Where is parcel 7731? Here are its label and the depot map.",
                Fixtures.tree("{\"type\":\"ephemeral\",\"ttl\":\"1h\"}")),
            new ContentPart.Image(null, "image/png",
                "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==",
                null, null),
            new ContentPart.Image("https://example.com/depots/liege-map.jpg", null, null, null,
                Fixtures.tree("{\"type\":\"ephemeral\"}")));
        assertThat(r.messages().get(1).content()).containsExactly(
            new ContentPart.Text("Let me look that up."),
            new ContentPart.ToolCall("toolu_01A09q90qw90lq917835lq9", "track_parcel",
                "{\"parcel_id\":\"7731\",\"include_history\":true,\"weight_kg\":2.5}"),
            new ContentPart.ToolCall("toolu_01B7xLp2qR9sT4vW6yZ8aC0d", "depot_hours", "{\"depot\":\"Liège\"}",
                Fixtures.tree("{\"type\":\"ephemeral\"}")));
        assertThat(r.messages().get(2).content()).containsExactly(
            new ContentPart.ToolResult("toolu_01A09q90qw90lq917835lq9",
                List.of(new ContentPart.Text("{\"status\": \"in transit\", \"eta\": \"Thursday 10:00\"}")), false,
                null),
            new ContentPart.ToolResult("toolu_01B7xLp2qR9sT4vW6yZ8aC0d", List.of(
                new ContentPart.Text("Depot closed until Friday (strike)."),
                new ContentPart.Image(null, "image/gif", "R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7",
                null, null)),
                true, Fixtures.tree("{\"type\":\"ephemeral\"}")),
            new ContentPart.Text("So when will it arrive in Liège? 🙏"));
        assertThat(r.tools()).containsExactly(
            new Tool("track_parcel", "Current status and ETA of a parcel.", json.at("/tools/0/input_schema"), true,
            null),
            new Tool("depot_hours", "Opening hours of a depot.", json.at("/tools/1/input_schema"), null,
                Fixtures.tree("{\"type\":\"ephemeral\",\"ttl\":\"1h\"}")));
        assertThat(r.toolChoice()).isEqualTo(new ToolChoice.Auto());
        assertThat(r.parallelToolCalls()).isFalse();
        assertThat(r.sampling()).isEqualTo(new Sampling(0.7, null, 40, 1024, List.of("\n\nHuman:", "END"), null, null,
            null));
        assertThat(r.user()).isEqualTo("u-5521");
        assertThat(r.stream()).isFalse();
        assertThat(r.extensions()).containsExactly(Map.entry("service_tier", Fixtures.tree("\"auto\"")));
    }

    @Test
    void decodesThinkingRedactedThinkingServerToolsAndOutputConfig()
    {
        byte[] body = Fixtures.bytes("request-thinking.json");
        JsonNode json = Fixtures.tree(body);
        ChatRequest r = codec.decodeRequest(body);

        assertThat(r.messages().get(1).content()).containsExactly(
            new ContentPart.Thinking("The user wants the current weather in Paris. I should call get_weather.",
                "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds1gYbfOFa1CbqWRrAMvYc5M="),
            new ContentPart.Thinking("", AnthropicCodec.REDACTED_THINKING_PREFIX
                + "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpPkNRj2YfWXGmKDxH4mPnZ5sQ7vB5URj"),
            new ContentPart.ToolCall("toolu_01NRLabsLyVHZPKxbKvkfSMn", "get_weather",
                "{\"location\":\"Paris, FR\",\"unit\":\"celsius\"}"));
        assertThat(r.tools()).extracting(Tool::name).containsExactly("get_weather");
        assertThat(r.toolChoice()).isEqualTo(new ToolChoice.Auto());
        assertThat(r.parallelToolCalls()).isNull();
        assertThat(r.stream()).isTrue();
        assertThat(r.includeUsage()).as("Anthropic streams always report usage").isTrue();
        assertThat(r.responseFormat()).isEqualTo(
            new ResponseFormat(ResponseFormat.Type.JSON_SCHEMA, null, json.at("/output_config/format/schema"), null));
        assertThat(r.extensions()).containsOnlyKeys("tools", "output_config", "thinking");
        assertThat(r.extensions().get("tools")).isEqualTo(Fixtures.tree("[" + json.at("/tools/1") + "]"));
        assertThat(r.extensions().get("output_config")).isEqualTo(Fixtures.tree("{\"effort\":\"high\"}"));
        assertThat(r.extensions().get("thinking")).isEqualTo(json.get("thinking"));
    }

    @Test
    void cacheControlSurvivesDecodeAndEncodeExactly()
    {
        String cacheControl = "{\"type\":\"ephemeral\",\"ttl\":\"1h\",\"future_field\":[1,{\"x\":null}]}";
        String body = "{\"model\":\"m\",\"max_tokens\":10,"
            + "\"system\":[{\"type\":\"text\",\"text\":\"s\",\"cache_control\":" + cacheControl + "}],"
            + "\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"u\","
            + "\"cache_control\":" + cacheControl + "}]}],"
            + "\"tools\":[{\"name\":\"t\",\"input_schema\":{\"type\":\"object\"},\"cache_control\":" + cacheControl
            + "}]}";

        JsonNode encoded = Fixtures.tree(codec.encodeRequest(decode(body)));

        assertThat(encoded.at("/system/0/cache_control").toString()).isEqualTo(cacheControl);
        assertThat(encoded.at("/messages/0/content/0/cache_control").toString()).isEqualTo(cacheControl);
        assertThat(encoded.at("/tools/0/cache_control").toString()).isEqualTo(cacheControl);
    }

    @Test
    void encodesAnOpenAiShapedRequestAsAValidAnthropicRequest()
    {
        JsonNode schema = Fixtures.tree(SCHEMA);
        ChatRequest request = new ChatRequest("claude-sonnet-4-5",
            List.of(new ContentPart.Text("You are the dispatcher of a logistics company.")),
            List.of(
                user(new ContentPart.Text("Where are parcels 7731 and 7732?")),
                new Message(Role.SYSTEM, List.of(new ContentPart.Text("Answer in French.")), null),
                user(new ContentPart.Text("Here is the label."),
                    new ContentPart.Image("data:image/png;base64,iVBORw0KGgo=", null, null, "high", null),
                    new ContentPart.Image("https://example.com/label.jpg", null, null, "low", null)),
                assistant(new ContentPart.Thinking("Two parcels: call the tool twice.", null),
                    new ContentPart.ToolCall("call_8f3kQ2mWcY1bN0", "track_parcel", "{\"parcel_id\": \"7731\"}"),
                    new ContentPart.ToolCall("call_Zp91xAq7LrT3eE", "track_parcel", "")),
                new Message(Role.TOOL, List.of(new ContentPart.ToolResult("call_8f3kQ2mWcY1bN0",
                    List.of(new ContentPart.Text("in transit")), false, null)), null),
                user(new ContentPart.Text("Which one arrives first?")),
                new Message(Role.TOOL, List.of(new ContentPart.ToolResult("call_Zp91xAq7LrT3eE",
                    List.of(new ContentPart.Text("delivered")), false, null)), null)),
            List.of(new Tool("track_parcel", "Current status of a parcel.", schema, true, null)),
            new ToolChoice.Auto(), true,
            new Sampling(0.2, 0.9, null, null, List.of("END"), null, null, null),
            null, true, true, "user-8812", null, null);

        byte[] encoded = codec.encodeRequest(request);

        Fixtures.assertExactJson(encoded, Fixtures.bytes("openai-shaped-request.json"));
        // The tool call arguments go out as the model wrote them, spacing included.
        assertThat(new String(encoded, StandardCharsets.UTF_8))
            .contains("\"input\":{\"parcel_id\": \"7731\"}");
        assertThat(Fixtures.tree(codec.encodeRequest(request, 2048)).get("max_tokens").intValue()).isEqualTo(2048);
    }

    @Test
    void parallelFlagWithoutToolChoiceBecomesAutoWithParallelDisabled()
    {
        ChatRequest r = new ChatRequest("m", List.of(), List.of(user(new ContentPart.Text("hi"))),
            List.of(new Tool("t", null, null, null, null)), null, false, null, null, false, false, null, null, null);

        JsonNode encoded = Fixtures.tree(codec.encodeRequest(r));

        assertThat(encoded.get("tool_choice")).isEqualTo(Fixtures.tree("{\"type\":\"auto\","
            + "\"disable_parallel_tool_use\":true}"));
        assertThat(encoded.at("/tools/0/input_schema")).isEqualTo(Fixtures.tree("{\"type\":\"object\",\"properties\":"
            + "{}}"));
    }

    @Test
    void toolChoicesMapBothWays()
    {
        String base = "{\"model\":\"m\",\"max_tokens\":1,\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}],"
            + "\"tool_choice\":";
        assertThat(decode(base + "{\"type\":\"any\"}}").toolChoice()).isEqualTo(new ToolChoice.Required());
        assertThat(decode(base + "{\"type\":\"none\"}}").toolChoice()).isEqualTo(new ToolChoice.None());
        ChatRequest named = decode(base + "{\"type\":\"tool\",\"name\":\"f\",\"disable_parallel_tool_use\":false}}");
        assertThat(named.toolChoice()).isEqualTo(new ToolChoice.Named("f"));
        assertThat(named.parallelToolCalls()).isTrue();
        for (String choice : new String[]{"{\"type\":\"any\"}", "{\"type\":\"none\"}",
            "{\"type\":\"tool\",\"name\":\"f\",\"disable_parallel_tool_use\":false}"})
        {
            assertThat(Fixtures.tree(codec.encodeRequest(decode(base + choice + "}"))).get("tool_choice"))
                .isEqualTo(Fixtures.tree(choice));
        }
    }

    @Test
    void aSystemStringAndAPlainUserStringStayStrings()
    {
        String body = "{\"model\":\"m\",\"max_tokens\":5,\"system\":\"Be brief.\",\"messages\":[{\"role\":\"user\","
            + "\"content\":\"Hi\"}]}";
        ChatRequest r = decode(body);
        assertThat(r.system()).containsExactly(new ContentPart.Text("Be brief."));
        assertThat(r.messages()).containsExactly(Message.text(Role.USER, "Hi"));
        Fixtures.assertExactJson(codec.encodeRequest(r), Fixtures.utf8(body));
    }

    @Test
    void acceptsTheDirectCallerAndNullsThatSdksEchoBackFromResponses()
    {
        ChatRequest r = decode("{\"model\":\"m\",\"max_tokens\":5,\"messages\":[{\"role\":\"assistant\",\"content\":["
            + "{\"type\":\"text\",\"text\":\"a\",\"citations\":null},"
            + "{\"type\":\"tool_use\",\"id\":\"t1\",\"name\":\"f\",\"input\":{},\"caller\":{\"type\":\"direct\"}}]}]}");
        assertThat(r.messages().get(0).content()).containsExactly(new ContentPart.Text("a"),
            new ContentPart.ToolCall("t1", "f", "{}"));
    }

    @Test
    void unsignedReasoningFromAnotherDialectIsNotSentButSignedReasoningIs()
    {
        ChatRequest r = request(List.of(user(new ContentPart.Text("q")),
            assistant(new ContentPart.Thinking("unsigned", null), new ContentPart.Thinking("signed", "sig"),
                new ContentPart.Text("a"))));

        JsonNode content = Fixtures.tree(codec.encodeRequest(r)).at("/messages/1/content");

        assertThat(content).isEqualTo(Fixtures.tree("[{\"type\":\"thinking\",\"thinking\":\"signed\","
            + "\"signature\":\"sig\"},"
            + "{\"type\":\"text\",\"text\":\"a\"}]"));
    }

    @Test
    void jsonSchemaResponseFormatFromOpenAiBecomesOutputConfigFormat()
    {
        JsonNode schema = Fixtures.tree(SCHEMA);
        ChatRequest r = request(List.of(user(new ContentPart.Text("q"))), Sampling.DEFAULTS,
            new ResponseFormat(ResponseFormat.Type.JSON_SCHEMA, "parcel", schema, true));

        JsonNode encoded = Fixtures.tree(codec.encodeRequest(r));

        assertThat(encoded.get("output_config")).isEqualTo(
            Fixtures.tree("{\"format\":{\"type\":\"json_schema\",\"schema\":" + SCHEMA + "}}"));
        ChatRequest text = request(List.of(user(new ContentPart.Text("q"))), Sampling.DEFAULTS,
            new ResponseFormat(ResponseFormat.Type.TEXT, null, null, null));
        assertThat(Fixtures.tree(codec.encodeRequest(text)).has("output_config")).as("text is the default").isFalse();
    }

    // ---- refusals: every one is a 400 naming the field ----

    @Test
    void refusesSamplingParametersAnthropicDoesNotHave()
    {
        List<Message> hi = List.of(user(new ContentPart.Text("hi")));
        assertRefused(encodeFails(request(hi, new Sampling(null, null, null, null, null, 0.5, null, null), null)),
            "presence_penalty", "presence_penalty: a presence penalty cannot be translated to anthropic");
        assertRefused(encodeFails(request(hi, new Sampling(null, null, null, null, null, null, 0.5, null), null)),
            "frequency_penalty", "frequency_penalty: a frequency penalty cannot be translated to anthropic");
        assertRefused(encodeFails(request(hi, new Sampling(null, null, null, null, null, null, null, 7L), null)),
            "seed", "seed: a sampling seed cannot be translated to anthropic");
    }

    @Test
    void refusesAJsonObjectResponseFormatWithoutASchema()
    {
        ChatRequest r = request(List.of(user(new ContentPart.Text("hi"))), Sampling.DEFAULTS,
            new ResponseFormat(ResponseFormat.Type.JSON_OBJECT, null, null, null));
        assertRefused(encodeFails(r), "response_format",
            "response_format: a JSON object response format without a schema cannot be translated to anthropic");
        ChatRequest noSchema = request(List.of(user(new ContentPart.Text("hi"))), Sampling.DEFAULTS,
            new ResponseFormat(ResponseFormat.Type.JSON_SCHEMA, "x", null, null));
        assertRefused(encodeFails(noSchema), "response_format",
            "response_format: a JSON schema response format without a schema cannot be translated to anthropic");
    }

    @Test
    void refusesMetadataAndMessageNames()
    {
        ChatRequest withMetadata = new ChatRequest("m", List.of(), List.of(user(new ContentPart.Text("hi"))),
            List.of(), null,
            null, null, null, false, false, null, Map.of("tenant", "acme"), null);
        assertRefused(encodeFails(withMetadata), "metadata",
            "metadata: cannot be translated to anthropic (its metadata holds only user_id)");
        ChatRequest named = request(List.of(new Message(Role.USER, List.of(new ContentPart.Text("hi")),
            "dispatcher_7")));
        assertRefused(encodeFails(named), "messages[0].name",
            "messages[0].name: a message name cannot be translated to anthropic");
    }

    @Test
    void refusesToolCallArgumentsThatAreNotOneJsonObject()
    {
        for (String arguments : new String[]{"{\"city\": \"Par", "[1,2]", "\"x\"", "{} {}", "null"})
        {
            ChatRequest r = request(List.of(user(new ContentPart.Text("q")),
                assistant(new ContentPart.Text("calling"), new ContentPart.ToolCall("c1", "f", arguments))));
            GatewayException e = encodeFails(r);
            assertThat(e.kind()).as(arguments).isEqualTo(ErrorKind.INVALID_REQUEST);
            assertThat(e.status()).isEqualTo(400);
            assertThat(e.param()).isEqualTo("messages[1].content[1]");
            assertThat(e.getMessage()).startsWith("messages[1].content[1]: tool call arguments are not a JSON object");
        }
    }

    @Test
    void refusesImagesAnthropicCannotTake()
    {
        assertRefused(encodeFails(request(List.of(user(new ContentPart.Image("ftp://example.com/a.png", null, null,
            null, null))))),
            "messages[0].content[0]",
            "messages[0].content[0]: image URL \"ftp://example.com/a.png\" cannot be sent to anthropic"
                + " (expected: an http, https or base64 data URL)");
        assertRefused(encodeFails(request(List.of(user(new ContentPart.Image("data:image/png,%89PNG", null, null, null,
            null))))),
            "messages[0].content[0]", "messages[0].content[0]: a data URL image must be base64 with a media type"
                + " (data:image/png;base64,...) to be sent to anthropic");
        assertRefused(encodeFails(request(List.of(user(new ContentPart.Image(null, null, "AAAA", null, null))))),
            "messages[0].content[0]",
            "messages[0].content[0]: an image without a media type cannot be translated to anthropic");
        ChatRequest systemImage = new ChatRequest("m",
            List.of(new ContentPart.Image("https://example.com/a.png", null, null, null, null)), List.of(), List.of(),
            null, null,
            null, null, false, false, null, null, null);
        assertRefused(encodeFails(systemImage), "system[0]",
            "system[0]: an image in a system prompt cannot be translated to anthropic");
    }

    @Test
    void refusesContentInTheWrongRole()
    {
        assertRefused(encodeFails(request(List.of(user(new ContentPart.Thinking("hm", "sig"))))), "messages[0].content[0]",
            "messages[0].content[0]: reasoning in a user message cannot be translated to anthropic");
        assertRefused(encodeFails(request(List.of(user(new ContentPart.ToolCall("c", "f", "{}"))))),
            "messages[0].content[0]",
            "messages[0].content[0]: a tool call in a user message cannot be translated to anthropic");
        assertRefused(encodeFails(request(List.of(assistant(new ContentPart.ToolResult("c", List.of(), false, null))))),
            "messages[0].content[0]",
            "messages[0].content[0]: a tool result in an assistant message cannot be translated to anthropic");
        assertRefused(encodeFails(request(List.of(user(new ContentPart.ToolResult("c", List.of(
                new ContentPart.ToolResult("d", List.of(), false, null)), false, null))))),
            "messages[0].content[0].content[0]",
            "messages[0].content[0].content[0]: a tool result in a tool result cannot be translated to anthropic");
    }

    @Test
    void refusesBlocksTheCanonicalModelCannotCarry()
    {
        String prefix = "{\"model\":\"m\",\"max_tokens\":5,\"messages\":[{\"role\":\"user\",\"content\":[";
        assertRefused(decodeFails(prefix + "{\"type\":\"document\",\"source\":{\"type\":\"text\","
            + "\"media_type\":\"text/plain\","
            + "\"data\":\"x\"}}]}]}"), "messages[0].content[0].type",
            "messages[0].content[0].type: \"document\" is not supported");
        assertRefused(decodeFails(prefix + "{\"type\":\"search_result\",\"source\":\"s\",\"title\":\"t\","
            + "\"content\":[]}]}]}"),
            "messages[0].content[0].type", "messages[0].content[0].type: \"search_result\" is not supported");
        assertRefused(decodeFails(prefix + "{\"type\":\"image\",\"source\":{\"type\":\"file\",\"file_id\":\"f\"}}]}]}"),
            "messages[0].content[0].source.type", "messages[0].content[0].source.type: \"file\" is not supported");
        assertRefused(decodeFails(prefix + "{\"type\":\"text\",\"text\":\"x\",\"citations\":["
            + "{\"type\":\"char_location\"}]}]}]}"),
            "messages[0].content[0].citations", "messages[0].content[0].citations: is not supported");
        assertRefused(decodeFails(prefix + "{\"type\":\"tool_result\",\"tool_use_id\":\"t\",\"content\":["
            + "{\"type\":\"document\"}]}]}]}"),
            "messages[0].content[0].content[0].type",
            "messages[0].content[0].content[0].type: \"document\" is not supported in a tool result");
        assertRefused(decodeFails(prefix + "{\"type\":\"text\",\"text\":\"x\",\"weight\":2}]}]}"),
            "messages[0].content[0].weight", "messages[0].content[0].weight: is not supported");
        assertRefused(decodeFails(prefix + "{\"type\":\"tool_use\",\"id\":\"t\",\"name\":\"f\",\"input\":{},"
                + "\"caller\":{\"type\":\"code_execution_20250825\",\"tool_id\":\"x\"}}]}]}"),
            "messages[0].content[0].caller",
            "messages[0].content[0].caller: is not supported (only direct tool calls)");
        assertRefused(decodeFails("{\"model\":\"m\",\"max_tokens\":5,\"messages\":[{\"role\":\"system\","
            + "\"content\":\"x\"}]}"),
            "messages[0].role", "messages[0].role: \"system\" messages are not supported (use the top-level system "
                + "field)");
        assertRefused(decodeFails("{\"model\":\"m\",\"max_tokens\":5,\"messages\":[],\"metadata\":{\"user_id\":\"u\","
            + "\"team\":\"a\"}}"),
            "metadata.team", "metadata.team: is not supported");
        assertRefused(decodeFails("{\"model\":\"m\",\"max_tokens\":5,\"messages\":[],\"system\":["
            + "{\"type\":\"image\"}]}"),
            "system[0].type", "system[0].type: \"image\" is not supported in system");
    }

    private static void assertRefused(GatewayException e, String param, String message)
    {
        assertThat(e).isNotNull();
        assertThat(e.getMessage()).isEqualTo(message);
        assertThat(e.kind()).isEqualTo(ErrorKind.UNSUPPORTED);
        assertThat(e.status()).isEqualTo(400);
        assertThat(e.param()).isEqualTo(param);
    }

    @ParameterizedTest
    @CsvFileSource(resources = "/golden/bad-requests.psv", delimiter = '|', quoteCharacter = '`')
    void rejectsInvalidRequestsNamingThePath(String body, String message, String param)
    {
        GatewayException e = decodeFails(body);
        assertThat(e.kind()).isEqualTo(ErrorKind.INVALID_REQUEST);
        assertThat(e.getMessage()).isEqualTo(message);
        assertThat(e.param()).isEqualTo(param);
    }

    @Test
    void peekFindsModelAndStreamAndRewriteModelSplicesTheAlias()
    {
        byte[] body = Fixtures.utf8("{\"model\":\"claude-latest\",\"max_tokens\":5,\"stream\":true,\"messages\":[{\"role\":\"user\"}]}");
        RequestPeek peek = codec.peek(body);
        assertThat(peek.model()).isEqualTo("claude-latest");
        assertThat(peek.stream()).isTrue();
        assertThat(new String(codec.rewriteModel(body, peek, "claude-sonnet-4-5"), StandardCharsets.UTF_8))
            .isEqualTo("{\"model\":\"claude-sonnet-4-5\",\"max_tokens\":5,\"stream\":true,\"messages\":[{\"role\":\"user\"}]}");
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "{'model':'m','max_tokens':5,'messages':'hi'}|messages: value: \"hi\" (expected: a non-empty array of messages)",
        "{'model':'m','max_tokens':5,'messages':[]}|messages: must not be empty (expected: at least one message)",
        "{'model':'m','max_tokens':5}|messages: must be set (expected: a non-empty array of messages)",
        "{'model':'m','max_tokens':5,'messages':[{'content':'hi'}]}|messages[0].role: must be set (expected: a string)",
        "{'model':'m','messages':[{'role':'user','content':'hi'}]}|max_tokens: must be set (expected: an integer)",
        "{'model':'m','max_tokens':'5','messages':[{'role':'user','content':'hi'}]}|max_tokens: value: \"5\" (expected: an integer)",
        "{'model':'m','max_tokens':1.5,'messages':[{'role':'user','content':'hi'}]}|max_tokens: value: 1.5 (expected: an integer)",
        "{'model':'m','max_tokens':99999999999,'messages':[{'role':'user','content':'hi'}]}|max_tokens: value: 99999999999 (expected: an integer)",
        "{'max_tokens':'x','messages':[],'model':'m'}|messages: must not be empty (expected: at least one message)",
    })
    void peekRejectsRequestsAnthropicWouldRefuseNamingTheField(String body, String message)
    {
        GatewayException e = catchThrowableOfType(GatewayException.class, () -> codec.peek(Fixtures.utf8(body.replace('\'', '"'))));
        assertThat(e.kind()).isEqualTo(ErrorKind.INVALID_REQUEST);
        assertThat(e.status()).isEqualTo(400);
        assertThat(e.getMessage()).isEqualTo(message);
    }

    @Test
    void largeConversationsMergeIntoAlternatingTurns()
    {
        List<Message> messages = new ArrayList<>();
        for (int i = 0; i < 6; i++)
            messages.add(user(new ContentPart.Text("u" + i)));
        messages.add(assistant(new ContentPart.Text("a")));
        messages.add(assistant(new ContentPart.Text("b")));

        JsonNode turns = Fixtures.tree(codec.encodeRequest(request(messages))).get("messages");

        assertThat(turns).hasSize(2);
        assertThat(turns.at("/0/content")).hasSize(6);
        assertThat(turns.at("/1/content")).isEqualTo(Fixtures.tree("[{\"type\":\"text\",\"text\":\"a\"},"
            + "{\"type\":\"text\","
            + "\"text\":\"b\"}]"));
    }
}
