package dev.sluice.plugin.anthropic;

import dev.sluice.api.ErrorKind;
import dev.sluice.api.GatewayException;
import dev.sluice.api.model.ChatRequest;
import dev.sluice.api.model.ChatResponse;
import dev.sluice.api.model.StreamEvent;
import dev.sluice.api.testing.StreamCollector;
import dev.sluice.mock.MockCall;
import dev.sluice.mock.MockProvider;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The Anthropic codec against the mock provider, on the wire: a request it encodes is one the mock accepts, and the
 * mock's answers — whole, streamed, refused — decode to what the mock meant. The runtime's tests cross the gateway;
 * this one checks the codec alone against the same double.
 */
class MockProviderWireTest
{
    private static MockProvider mock;

    @BeforeAll
    static void start() throws Exception
    {
        mock = MockProvider.builder().streamProfile(java.time.Duration.ZERO, java.time.Duration.ZERO, 5).start();
    }

    @AfterAll
    static void stop()
    {
        mock.close();
    }

    private static ChatRequest request(String model, boolean stream)
    {
        return AnthropicCodec.INSTANCE.decodeRequest(("{\"model\":\"" + model + "\",\"stream\":" + stream + ",\"max_tokens\":64,\"system\":\"Be brief.\","
            + "\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]}").getBytes(StandardCharsets.UTF_8));
    }

    private static MockCall.Answer post(ChatRequest request)
    {
        return MockCall.post(mock, "/v1/messages", Map.of("x-api-key", "k", "anthropic-version", "2023-06-01"),
            AnthropicCodec.INSTANCE.encodeRequest(request));
    }

    @Test
    void aWholeAnswerDecodesToTheMocksTextAndUsage()
    {
        MockCall.Answer answer = post(request("wire-model", false));

        assertThat(answer.status()).as(answer.text()).isEqualTo(200);
        ChatResponse response = AnthropicCodec.INSTANCE.decodeResponse(answer.body());
        assertThat(StreamCollector.text(response)).isEqualTo(MockProvider.DEFAULT_TEXT);
        assertThat(response.stopReason()).isEqualTo(ChatResponse.StopReason.END_TURN);
        assertThat(response.usage().outputTokens()).isPositive();
        assertThat(mock.lastRequest().model()).isEqualTo("wire-model");
    }

    @Test
    void aStreamDecodesInSmallChunksToTheMocksTextThenItsEnd()
    {
        MockCall.Answer answer = post(request("wire-model", true));

        assertThat(answer.status()).as(answer.text()).isEqualTo(200);
        var decoder = AnthropicCodec.INSTANCE.newStreamDecoder();
        List<StreamEvent> events = StreamCollector.decode(decoder, answer.body(), 7);
        assertThat(StreamCollector.text(events)).isEqualTo(MockProvider.DEFAULT_TEXT);
        assertThat(events).anySatisfy(e -> assertThat(e).isInstanceOf(StreamEvent.Stop.class));
        assertThat(decoder.complete()).isTrue();
    }

    @Test
    void aRefusalDecodesToTheKindAndStatusTheMockSent()
    {
        MockCall.Answer answer = post(request("mock-error-429", false));

        assertThat(answer.status()).isEqualTo(429);
        GatewayException error = AnthropicCodec.INSTANCE.decodeError(answer.status(), answer.body());
        assertThat(error.kind()).isEqualTo(ErrorKind.RATE_LIMITED);
        assertThat(error.status()).isEqualTo(429);
    }
}
