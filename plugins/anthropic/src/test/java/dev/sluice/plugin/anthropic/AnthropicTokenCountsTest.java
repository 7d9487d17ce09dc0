package dev.sluice.plugin.anthropic;

import dev.sluice.api.ErrorKind;
import dev.sluice.api.GatewayException;
import dev.sluice.api.codec.DialectCodec;
import dev.sluice.api.codec.RequestPeek;
import dev.sluice.api.model.ChatRequest;
import dev.sluice.api.model.ChatRequest.Sampling;
import dev.sluice.api.model.ContentPart;
import dev.sluice.api.model.Message;
import dev.sluice.api.model.Message.Role;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

class AnthropicTokenCountsTest
{
    private static final RequestPeek PEEK = new RequestPeek("claude-sonnet-4-5", false, -1, -1);

    private final DialectCodec.TokenCountCodec counts = AnthropicCodec.INSTANCE.tokenCounts();

    private ChatRequest decode(String json)
    {
        return counts.decodeRequest(Fixtures.utf8(json), PEEK);
    }

    private GatewayException decodeFails(String json)
    {
        return catchThrowableOfType(GatewayException.class, () -> decode(json));
    }

    @Test
    void decodesAMessagesRequestWithoutMaxTokens()
    {
        ChatRequest r = decode("{\"model\":\"claude-sonnet-4-5\",\"system\":\"Be brief.\",\"messages\":[{\"role\":\"user\","
            + "\"content\":\"Hello, Claude\"}],\"tools\":[{\"name\":\"get_weather\",\"description\":\"Weather\","
            + "\"input_schema\":{\"type\":\"object\"}}],\"thinking\":{\"type\":\"enabled\",\"budget_tokens\":1024}}");
        assertThat(r.model()).isEqualTo("claude-sonnet-4-5");
        assertThat(r.system()).containsExactly(new ContentPart.Text("Be brief."));
        assertThat(r.messages()).containsExactly(Message.text(Role.USER, "Hello, Claude"));
        assertThat(r.tools()).extracting(t -> t.name()).containsExactly("get_weather");
        assertThat(r.sampling().maxTokens()).isNull();
        assertThat(r.stream()).isFalse();
        assertThat(r.extensions()).containsKey("thinking");
    }

    @Test
    void refusesAFieldOnlyGenerationHasNamingIt()
    {
        GatewayException e = decodeFails("{\"model\":\"claude-sonnet-4-5\",\"max_tokens\":1024,\"messages\":[{\"role\":"
            + "\"user\",\"content\":\"Hi\"}]}");
        assertThat(e.kind()).isEqualTo(ErrorKind.INVALID_REQUEST);
        assertThat(e.param()).isEqualTo("max_tokens");
        assertThat(e.getMessage()).startsWith("max_tokens: is not a field of a token count request (expected one of: ")
            .contains("messages", "system", "tools");
    }

    @Test
    void refusesBadInputWithTheMessagesRequestsMessages()
    {
        assertThat(decodeFails("{\"model\":\"claude-sonnet-4-5\",\"messages\":[").getMessage())
            .startsWith("request body is not valid JSON");
        assertThat(decodeFails("[1]").getMessage()).startsWith("request body: ");
        GatewayException role = decodeFails("{\"model\":\"claude-sonnet-4-5\",\"messages\":[{\"role\":\"robot\","
            + "\"content\":\"Hi\"}]}");
        assertThat(role.kind()).isEqualTo(ErrorKind.INVALID_REQUEST);
        assertThat(role.getMessage()).startsWith("messages[0].role: ");
        assertThat(decodeFails("{\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]}").getMessage())
            .startsWith("model: ");
    }

    @Test
    void peekNeedsNoMaxTokensAndStillNeedsMessages()
    {
        RequestPeek peek = AnthropicTokenCounts.PEEK.scan(Fixtures.utf8("{\"model\":\"claude-haiku-4-5\",\"messages\":"
            + "[{\"role\":\"user\",\"content\":\"Hi\"}]}"));
        assertThat(peek.model()).isEqualTo("claude-haiku-4-5");
        GatewayException e = catchThrowableOfType(GatewayException.class,
            () -> AnthropicTokenCounts.PEEK.scan(Fixtures.utf8("{\"model\":\"claude-haiku-4-5\"}")));
        assertThat(e.kind()).isEqualTo(ErrorKind.INVALID_REQUEST);
        assertThat(e.getMessage()).contains("messages");
    }

    @Test
    void encodesACountRequestWithoutWhatOnlyGenerationReads()
    {
        ChatRequest r = new ChatRequest("claude-sonnet-4-5", List.of(new ContentPart.Text("Be brief.")),
            List.of(Message.text(Role.USER, "Hello")), List.of(), null, null,
            new Sampling(0.5, null, null, 100, List.of("STOP"), 0.1, null, 7L), null, true, true, "u-1",
            java.util.Map.of("team", "a"), null);
        assertThat(Fixtures.tree(counts.encodeRequest(r))).isEqualTo(Fixtures.tree("{\"model\":\"claude-sonnet-4-5\","
            + "\"system\":\"Be brief.\",\"messages\":[{\"role\":\"user\",\"content\":\"Hello\"}]}"));
    }

    @Test
    void aDecodedCountEncodesBackToTheSameRequest()
    {
        String body = "{\"model\":\"claude-sonnet-4-5\",\"messages\":[{\"role\":\"user\",\"content\":\"Hello\"}],"
            + "\"thinking\":{\"type\":\"enabled\",\"budget_tokens\":1024}}";
        assertThat(Fixtures.tree(counts.encodeRequest(decode(body)))).isEqualTo(Fixtures.tree(body));
    }

    @Test
    void answersAndReadsInputTokens()
    {
        assertThat(Fixtures.tree(counts.encodeResponse(1234))).isEqualTo(Fixtures.tree("{\"input_tokens\":1234}"));
        assertThat(counts.decodeResponse(Fixtures.utf8("{\"input_tokens\":14}"))).isEqualTo(14);
    }

    @Test
    void anAnswerWithoutACountIsTheProvidersFault()
    {
        GatewayException missing = catchThrowableOfType(GatewayException.class,
            () -> counts.decodeResponse(Fixtures.utf8("{\"tokens\":14}")));
        assertThat(missing.kind()).isEqualTo(ErrorKind.UPSTREAM_UNAVAILABLE);
        assertThat(missing.getMessage()).contains("input_tokens");
        GatewayException garbage = catchThrowableOfType(GatewayException.class,
            () -> counts.decodeResponse(Fixtures.utf8("<html>")));
        assertThat(garbage.kind()).isEqualTo(ErrorKind.UPSTREAM_UNAVAILABLE);
    }
}
