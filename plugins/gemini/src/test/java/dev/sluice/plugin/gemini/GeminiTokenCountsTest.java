package dev.sluice.plugin.gemini;

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

class GeminiTokenCountsTest
{
    private static final RequestPeek PEEK = new RequestPeek("gemini-2.5-flash", false, -1, -1);

    private final DialectCodec.TokenCountCodec counts = GeminiCodec.INSTANCE.tokenCounts();

    private ChatRequest decode(String json)
    {
        return counts.decodeRequest(Fixtures.utf8(json), PEEK);
    }

    private GatewayException decodeFails(String json)
    {
        return catchThrowableOfType(GatewayException.class, () -> decode(json));
    }

    @Test
    void decodesContentsWithTheModelOfThePath()
    {
        ChatRequest r = decode("{\"contents\":[{\"role\":\"user\",\"parts\":[{\"text\":\"The quick brown fox\"}]}]}");
        assertThat(r.model()).isEqualTo("gemini-2.5-flash");
        assertThat(r.messages()).containsExactly(Message.text(Role.USER, "The quick brown fox"));
        assertThat(r.stream()).isFalse();
    }

    @Test
    void decodesAGenerateContentRequestWithItsSystemInstruction()
    {
        ChatRequest r = decode("{\"generateContentRequest\":{\"model\":\"models/gemini-2.5-flash\",\"contents\":[{\"role\":"
            + "\"user\",\"parts\":[{\"text\":\"Hi\"}]}],\"systemInstruction\":{\"parts\":[{\"text\":\"Be brief.\"}]}}}");
        assertThat(r.system()).containsExactly(new ContentPart.Text("Be brief."));
        assertThat(r.messages()).containsExactly(Message.text(Role.USER, "Hi"));
        assertThat(decode("{\"generate_content_request\":{\"contents\":[{\"parts\":[{\"text\":\"Hi\"}]}]}}").messages())
            .hasSize(1);
    }

    @Test
    void refusesBadShapesNamingTheField()
    {
        GatewayException both = decodeFails("{\"contents\":[{\"parts\":[{\"text\":\"a\"}]}],\"generateContentRequest\":"
            + "{\"contents\":[{\"parts\":[{\"text\":\"b\"}]}]}}");
        assertThat(both.kind()).isEqualTo(ErrorKind.INVALID_REQUEST);
        assertThat(both.getMessage()).isEqualTo("generateContentRequest: cannot be set with contents (expected: contents"
            + " or a generateContentRequest, not both)");
        assertThat(decodeFails("{}").getMessage()).isEqualTo("contents: must be set (expected: contents, or a"
            + " generateContentRequest)");
        assertThat(decodeFails("{\"contents\":\"hi\"}").getMessage()).startsWith("contents: value: \"hi\"");
        GatewayException unknown = decodeFails("{\"contents\":[],\"temperature\":1}");
        assertThat(unknown.param()).isEqualTo("temperature");
        assertThat(unknown.getMessage()).startsWith("temperature: is not a countTokens field");
        assertThat(decodeFails("{\"contents\":[").getMessage()).startsWith("request body is not valid JSON");
    }

    @Test
    void namesABadFieldInsideTheGenerateContentRequest()
    {
        GatewayException e = decodeFails("{\"generateContentRequest\":{\"contents\":[{\"role\":\"bot\",\"parts\":[{\"text\":"
            + "\"Hi\"}]}]}}");
        assertThat(e.kind()).isEqualTo(ErrorKind.INVALID_REQUEST);
        assertThat(e.getMessage()).startsWith("generateContentRequest.contents[0].role: ");
        assertThat(e.param()).startsWith("generateContentRequest.contents[0].role");
    }

    @Test
    void encodesContentsAloneWhenThatIsAllThereIs()
    {
        ChatRequest r = new ChatRequest("gemini-2.5-flash", List.of(), List.of(Message.text(Role.USER, "Hello")), List.of(),
            null, null, new Sampling(0.2, null, null, 64, List.of(), null, null, null), null, true, true, null, null, null);
        assertThat(Fixtures.tree(counts.encodeRequest(r))).isEqualTo(Fixtures.tree("{\"contents\":[{\"role\":\"user\","
            + "\"parts\":[{\"text\":\"Hello\"}]}]}"));
    }

    @Test
    void encodesAGenerateContentRequestNamingItsModelWhenThereIsMore()
    {
        ChatRequest r = new ChatRequest("gemini-2.5-flash", List.of(new ContentPart.Text("Be brief.")),
            List.of(Message.text(Role.USER, "Hello")), List.of(), null, null, null, null, false, false, null, null, null);
        assertThat(Fixtures.tree(counts.encodeRequest(r))).isEqualTo(Fixtures.tree("{\"generateContentRequest\":{"
            + "\"model\":\"models/gemini-2.5-flash\",\"contents\":[{\"role\":\"user\",\"parts\":[{\"text\":\"Hello\"}]}],"
            + "\"systemInstruction\":{\"parts\":[{\"text\":\"Be brief.\"}]}}}"));
    }

    @Test
    void answersAndReadsTotalTokens()
    {
        assertThat(Fixtures.tree(counts.encodeResponse(31))).isEqualTo(Fixtures.tree("{\"totalTokens\":31}"));
        assertThat(counts.decodeResponse(Fixtures.utf8("{\"totalTokens\":31,\"promptTokensDetails\":[{\"modality\":"
            + "\"TEXT\",\"tokenCount\":31}]}"))).isEqualTo(31);
        // Proto3 JSON leaves a zero out.
        assertThat(counts.decodeResponse(Fixtures.utf8("{}"))).isZero();
    }

    @Test
    void anAnswerThatIsNoCountIsTheProvidersFault()
    {
        for (String body : List.of("[]", "{\"totalTokens\":\"many\"}", "{\"totalTokens\":-1}", "oops"))
        {
            GatewayException e = catchThrowableOfType(GatewayException.class, () -> counts.decodeResponse(Fixtures.utf8(body)));
            assertThat(e).as(body).isNotNull();
            assertThat(e.kind()).as(body).isEqualTo(ErrorKind.UPSTREAM_UNAVAILABLE);
        }
    }
}
