package dev.sluice.runtime;

import com.fasterxml.jackson.databind.JsonNode;
import com.openai.client.OpenAIClient;
import com.openai.core.http.StreamResponse;
import com.openai.errors.BadRequestException;
import com.openai.helpers.ResponseAccumulator;
import com.openai.models.chat.completions.ChatCompletion;
import com.openai.models.chat.completions.ChatCompletionChunk;
import com.openai.models.chat.completions.ChatCompletionCreateParams;
import com.openai.models.responses.EasyInputMessage;
import com.openai.models.responses.FunctionTool;
import com.openai.models.responses.Response;
import com.openai.models.responses.ResponseCreateParams;
import com.openai.models.responses.ResponseFunctionToolCall;
import com.openai.models.responses.ResponseInputItem;
import com.openai.models.responses.ResponseOutputItem;
import com.openai.models.responses.ResponseStreamEvent;
import com.openai.models.responses.WebSearchTool;
import com.openai.core.JsonValue;
import dev.sluice.mock.MockDialect;
import dev.sluice.mock.MockProvider;
import dev.sluice.mock.RecordedRequest;
import dev.sluice.support.json.Json;
import org.eclipse.jetty.io.ArrayByteBufferPool;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The official openai-java SDK's Responses API ({@code client.responses()}) against the gateway's
 * {@code openai-responses} server binding, plugins loaded from the distribution's jars, and the mock provider: through
 * an Anthropic provider (translated) and an {@code openai-responses} provider (same dialect, bytes forwarded), plain,
 * streamed and with function tools across two turns; a Chat Completions client reaching a Responses-only provider;
 * OpenAI's built-in tools refused when translating and forwarded when not.
 */
class ResponsesApiTest
{
    /** Routes {@code anthropic/*} to an Anthropic provider and {@code responses/*} to a Responses provider. */
    private static final String CONFIG = """
        listen: { host: 127.0.0.1, port: 0 }
        bindings:
          north_responses: { type: openai-responses, kind: server, exit: router }
          north_openai: { type: openai, kind: server, exit: router }
          router:
            type: router
            kind: proxy
            routes:
              - when: [ { model: "anthropic/*" } ]
                exit: south_anthropic
              - when: [ { model: "responses/*" } ]
                exit: south_responses
          south_anthropic:
            type: anthropic
            kind: client
            options: { url: "%1$s", api_key: "${{env.ANTHROPIC_KEY}}", http: %2$s }
          south_responses:
            type: openai-responses
            kind: client
            options: { url: "%1$s", api_key: "${{env.OPENAI_KEY}}", http: %2$s }
        """;
    private static final String HTTP = "{ version: http/1.1, first_byte_timeout: 15s, idle_timeout: 15s }";

    @TempDir
    Path dir;

    private final ArrayByteBufferPool.Tracking pool = new ArrayByteBufferPool.Tracking();
    private MockProvider mock;
    private GatewayHarness gateway;
    private OpenAIClient sdk;

    @BeforeEach
    void start() throws Exception
    {
        mock = MockProvider.builder().streamProfile(Duration.ZERO, Duration.ofMillis(1), 8).start();
        gateway = GatewayHarness.start(dir, CONFIG.formatted(mock.baseUrl(), HTTP), TestDist.plugins(),
            Map.of("ANTHROPIC_KEY", "sk-ant-upstream", "OPENAI_KEY", "sk-upstream"), pool);
        sdk = SdkClients.openai("http://127.0.0.1:" + gateway.gateway.port(), "sk-client");
    }

    @AfterEach
    void stop() throws Exception
    {
        SdkClients.stop(mock, sdk, gateway);
    }

    private static MockDialect providerOf(String prefix)
    {
        return prefix.equals("anthropic") ? MockDialect.ANTHROPIC : MockDialect.OPENAI_RESPONSES;
    }

    private static List<ResponseFunctionToolCall> calls(Response response)
    {
        return response.output().stream().filter(ResponseOutputItem::isFunctionCall).map(ResponseOutputItem::asFunctionCall)
            .toList();
    }

    private static JsonNode json(String s) throws Exception
    {
        return Json.MAPPER.readTree(s);
    }

    /** @return the streamed response, every event validated against the SDK's model and accumulated */
    private Response streamed(ResponseCreateParams params, StringBuilder deltas)
    {
        ResponseAccumulator accumulator = ResponseAccumulator.create();
        try (StreamResponse<ResponseStreamEvent> stream = sdk.responses().createStreaming(params))
        {
            stream.stream().forEach(event ->
            {
                event.validate();
                accumulator.accumulate(event);
                if (event.isOutputTextDelta())
                    deltas.append(event.asOutputTextDelta().delta());
            });
        }
        return accumulator.response();
    }

    private static FunctionTool weatherTool()
    {
        return FunctionTool.builder().name("get_weather").description("Current weather").strict(false)
            .parameters(FunctionTool.Parameters.builder().putAdditionalProperty("type", JsonValue.from("object"))
                .putAdditionalProperty("properties", JsonValue.from(Map.of("location", Map.of("type", "string"))))
                .build())
            .build();
    }

    @ParameterizedTest
    @ValueSource(strings = {"anthropic", "responses"})
    void createReturnsTheProvidersTextAndUsage(String provider)
    {
        Response response = sdk.responses().create(ResponseCreateParams.builder().model(provider + "/gpt-4.1")
            .instructions("Be brief").input("Say hello").maxOutputTokens(200).build());

        response.validate();
        assertThat(SdkClients.responseText(response)).isEqualTo(MockProvider.DEFAULT_TEXT);
        assertThat(response.model().asString()).isEqualTo(provider + "/gpt-4.1");
        assertThat(response.usage()).hasValueSatisfying(u -> assertThat(u.outputTokens()).isPositive());
        RecordedRequest sent = mock.lastRequest();
        assertThat(sent.dialect()).isEqualTo(providerOf(provider));
        if (provider.equals("responses"))
        {
            // Same dialect: the client's bytes, untouched.
            assertThat(sent.path()).isEqualTo("/v1/responses");
            assertThat(sent.bodyAsString()).contains("\"input\":\"Say hello\"").contains("\"instructions\":\"Be brief\"");
            assertThat(sent.header("authorization")).isEqualTo("Bearer sk-upstream");
        }
        else
        {
            assertThat(sent.bodyAsString()).contains("\"system\"").contains("Be brief").contains("\"max_tokens\":200");
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"anthropic", "responses"})
    void createStreamingDeliversTypedEventsTheSdkAccumulates(String provider) throws Exception
    {
        StringBuilder deltas = new StringBuilder();
        Response response = streamed(ResponseCreateParams.builder().model(provider + "/gpt-4.1").input("Say hello")
            .build(), deltas);

        assertThat(deltas.toString()).isEqualTo(MockProvider.DEFAULT_TEXT);
        assertThat(SdkClients.responseText(response)).isEqualTo(MockProvider.DEFAULT_TEXT);
        assertThat(response.status()).hasValueSatisfying(s -> assertThat(s.asString()).isEqualTo("completed"));
        assertThat(response.usage()).hasValueSatisfying(u -> assertThat(u.totalTokens()).isPositive());
        assertThat(mock.lastRequest().dialect()).isEqualTo(providerOf(provider));
        // Every buffer of the stream goes back to the pool once the exchange is done.
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (!pool.getLeaks().isEmpty() && System.nanoTime() < deadline)
            Thread.sleep(20);
        assertThat(pool.getLeaks()).as(pool.dumpLeaks()).isEmpty();
    }

    @ParameterizedTest
    @ValueSource(strings = {"anthropic", "responses"})
    void functionToolsAcrossTwoTurns(String provider) throws Exception
    {
        ResponseCreateParams first = ResponseCreateParams.builder().model(provider + "/mock-tools")
            .input("What is the weather in Paris?").addTool(weatherTool()).build();
        Response calling = sdk.responses().create(first);
        calling.validate();
        List<ResponseFunctionToolCall> calls = calls(calling);
        assertThat(calls).extracting(ResponseFunctionToolCall::name).containsExactly("get_weather", "get_time");
        assertThat(json(calls.get(0).arguments())).isEqualTo(json("{\"location\":\"Paris\",\"unit\":\"celsius\"}"));

        // The same calls streamed: arguments by deltas, assembled by the SDK.
        Response streamedCalls = streamed(first, new StringBuilder());
        assertThat(calls(streamedCalls)).extracting(ResponseFunctionToolCall::callId)
            .containsExactlyElementsOf(calls.stream().map(ResponseFunctionToolCall::callId).toList());
        assertThat(json(calls(streamedCalls).get(1).arguments())).isEqualTo(json("{\"timezone\":\"Europe/Paris\"}"));

        List<ResponseInputItem> input = new ArrayList<>();
        input.add(ResponseInputItem.ofEasyInputMessage(EasyInputMessage.builder().role(EasyInputMessage.Role.USER)
            .content("What is the weather in Paris?").build()));
        for (ResponseFunctionToolCall call : calls)
            input.add(ResponseInputItem.ofFunctionCall(call));
        for (ResponseFunctionToolCall call : calls)
            input.add(ResponseInputItem.ofFunctionCallOutput(ResponseInputItem.FunctionCallOutput.builder()
                .callId(call.callId()).output(call.name().equals("get_weather") ? "22 C, sunny" : "14:00").build()));
        Response answer = sdk.responses().create(ResponseCreateParams.builder().model(provider + "/gpt-4.1")
            .input(ResponseCreateParams.Input.ofResponse(input)).addTool(weatherTool()).build());

        assertThat(SdkClients.responseText(answer)).isEqualTo(MockProvider.DEFAULT_TEXT);
        String sent = mock.lastRequest().bodyAsString();
        if (provider.equals("anthropic"))
            assertThat(sent).contains("\"tool_result\"").contains("\"tool_use_id\":\"" + calls.get(0).callId() + "\"")
                .contains("22 C, sunny");
        else
            assertThat(sent).contains("\"function_call_output\"").contains("\"call_id\":\"" + calls.get(0).callId() + "\"");
    }

    @Test
    void aChatCompletionsClientReachesAResponsesOnlyProvider()
    {
        ChatCompletionCreateParams params = ChatCompletionCreateParams.builder().model("responses/gpt-4.1")
            .addSystemMessage("Be brief").addUserMessage("Say hello").build();
        ChatCompletion completion = sdk.chat().completions().create(params);
        assertThat(completion.choices().get(0).message().content()).hasValue(MockProvider.DEFAULT_TEXT);
        assertThat(completion.usage()).hasValueSatisfying(u -> assertThat(u.completionTokens()).isPositive());
        RecordedRequest sent = mock.lastRequest();
        assertThat(sent.dialect()).isEqualTo(MockDialect.OPENAI_RESPONSES);
        assertThat(sent.path()).isEqualTo("/v1/responses");
        assertThat(sent.bodyAsString()).contains("\"instructions\":\"Be brief\"").contains("\"input_text\"");

        StringBuilder text = new StringBuilder();
        try (StreamResponse<ChatCompletionChunk> stream = sdk.chat().completions().createStreaming(params))
        {
            stream.stream().forEach(chunk -> chunk.choices().forEach(c -> c.delta().content().ifPresent(text::append)));
        }
        assertThat(text.toString()).isEqualTo(MockProvider.DEFAULT_TEXT);
    }

    @Test
    void aBuiltInToolIsRefusedInOpenAisShapeWithoutAnUpstreamCallWhenTranslating()
    {
        ResponseCreateParams params = ResponseCreateParams.builder().model("anthropic/gpt-4.1").input("News today?")
            .addTool(weatherTool()).addTool(WebSearchTool.builder().type(WebSearchTool.Type.WEB_SEARCH).build()).build();
        assertThatThrownBy(() -> sdk.responses().create(params)).isInstanceOfSatisfying(BadRequestException.class, e ->
        {
            assertThat(e.statusCode()).isEqualTo(400);
            assertThat(e.type()).hasValue("invalid_request_error");
            assertThat(e.param()).hasValue("tools[1].type");
            assertThat(e.getMessage()).contains("\"web_search\"");
        });
        assertThatThrownBy(() -> sdk.responses().create(ResponseCreateParams.builder().model("anthropic/gpt-4.1")
            .input("And then?").previousResponseId("resp_123").build()))
            .isInstanceOfSatisfying(com.openai.errors.NotFoundException.class,
                e -> assertThat(e.getMessage()).contains("resp_123").contains("not found"));
        assertThat(mock.requestCount()).isZero();
    }

    @Test
    void aBuiltInToolIsForwardedToAResponsesProvider()
    {
        Response response = sdk.responses().create(ResponseCreateParams.builder().model("responses/gpt-4.1")
            .input("News today?").addTool(WebSearchTool.builder().type(WebSearchTool.Type.WEB_SEARCH).build())
            .previousResponseId("resp_123").build());
        assertThat(SdkClients.responseText(response)).isEqualTo(MockProvider.DEFAULT_TEXT);
        assertThat(mock.requestCount()).isEqualTo(1);
        assertThat(mock.lastRequest().bodyAsString()).contains("\"web_search\"").contains("\"previous_response_id\"");
    }

    @Test
    void theDemoConfigAnswersTheResponsesApi() throws Exception
    {
        String demo = java.nio.file.Files.readString(TestDist.configDir().resolve("demo.yaml"));
        try (GatewayHarness demoGateway = GatewayHarness.start(dir, demo))
        {
            OpenAIClient client = SdkClients.openai("http://127.0.0.1:" + demoGateway.gateway.port(), "any");
            try
            {
                ResponseCreateParams params = ResponseCreateParams.builder().model("demo").input("Hi").build();
                Response response = client.responses().create(params);
                response.validate();
                assertThat(SdkClients.responseText(response)).isEqualTo("Hello from Sluice's built-in mock provider.");
                StringBuilder deltas = new StringBuilder();
                try (StreamResponse<ResponseStreamEvent> stream = client.responses().createStreaming(params))
                {
                    stream.stream().forEach(e -> e.outputTextDelta().ifPresent(d -> deltas.append(d.delta())));
                }
                assertThat(deltas.toString()).isEqualTo("Hello from Sluice's built-in mock provider.");
            }
            finally
            {
                client.close();
            }
        }
    }
}
