package dev.sluice.plugin.openai;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.sluice.api.ErrorKind;
import dev.sluice.api.GatewayException;
import dev.sluice.api.codec.RequestPeek;
import dev.sluice.support.json.Json;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

class OpenAiPeekTest
{
    private final OpenAiCodec codec = OpenAiCodec.INSTANCE;
    /** The smallest messages field the peek accepts. */
    private static final String MESSAGES = ",\"messages\":[{\"role\":\"user\"}]";

    private static byte[] utf8(String s)
    {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private GatewayException peekFails(String body)
    {
        return catchThrowableOfType(GatewayException.class, () -> codec.peek(utf8(body)));
    }

    @Test
    void findsModelAndStreamInFixtures()
    {
        RequestPeek plain = codec.peek(Fixtures.bytes("request-multiturn.json"));
        assertThat(plain.model()).isEqualTo("gpt-4o-mini");
        assertThat(plain.stream()).isFalse();

        RequestPeek streamed = codec.peek(Fixtures.bytes("request-tool-results.json"));
        assertThat(streamed.model()).isEqualTo("gpt-4o");
        assertThat(streamed.stream()).isTrue();
    }

    @Test
    void modelOffsetsSpanTheQuotedValueAfterMultiByteTextAndEscapes()
    {
        String prefix = "{\"messages\":[{\"role\":\"user\",\"content\":\"héllo 日本語 🎉 \\\"quoted\\\" \\u00e9\"}],\"model\": ";
        String literal = "\"gpt-\\u0034o\\\"mini\\/x\"";
        String suffix = ",\"stream\":true,\"metadata\":{\"k\":\"ü\"}}";
        byte[] body = utf8(prefix + literal + suffix);

        RequestPeek peek = codec.peek(body);

        assertThat(peek.model()).isEqualTo("gpt-4o\"mini/x");
        assertThat(peek.stream()).isTrue();
        assertThat(peek.modelStart()).isEqualTo(utf8(prefix).length);
        assertThat(peek.modelEnd()).isEqualTo(utf8(prefix + literal).length);
        assertThat(new String(body, peek.modelStart(), peek.modelEnd() - peek.modelStart(), StandardCharsets.UTF_8))
            .isEqualTo(literal);
    }

    @Test
    void rewriteModelSplicesTheNewNameAndKeepsEveryOtherByte()
    {
        String prefix = "{\"messages\":[{\"role\":\"user\",\"content\":\"Grüße aus Köln 🌧 \\\"ok\\\"\"}],\"model\":";
        String suffix = ",\"temperature\":0.5}";
        byte[] body = utf8(prefix + "\"gpt-\\u00e9\"" + suffix);
        RequestPeek peek = codec.peek(body);

        byte[] rewritten = codec.rewriteModel(body, peek, "gpt-4o-mini \"eu\"");

        JsonNode tree = Fixtures.tree(rewritten);
        assertThat(tree.get("model").textValue()).isEqualTo("gpt-4o-mini \"eu\"");
        assertThat(tree.get("messages").get(0).get("content").textValue()).isEqualTo("Grüße aus Köln 🌧 \"ok\"");
        byte[] head = utf8(prefix);
        byte[] tail = utf8(suffix);
        assertThat(Arrays.copyOfRange(rewritten, 0, head.length)).isEqualTo(head);
        assertThat(Arrays.copyOfRange(rewritten, rewritten.length - tail.length, rewritten.length)).isEqualTo(tail);
        // The rewritten body peeks like any other.
        assertThat(codec.peek(rewritten).model()).isEqualTo("gpt-4o-mini \"eu\"");
    }

    @Test
    void rewriteModelWritesPlainNamesByteForByteAndEscapesOrEncodesTheRest()
    {
        byte[] body = utf8("{\"model\":\"x\",\"n\":1" + MESSAGES + "}");
        RequestPeek peek = codec.peek(body);

        assertThat(new String(codec.rewriteModel(body, peek, "gpt-4o-2024-08-06 ~{}"), StandardCharsets.UTF_8))
            .isEqualTo("{\"model\":\"gpt-4o-2024-08-06 ~{}\",\"n\":1" + MESSAGES + "}");
        assertThat(new String(codec.rewriteModel(body, peek, "modèle\\1\t\u007f"), StandardCharsets.UTF_8))
            .isEqualTo("{\"model\":\"modèle\\\\1\\t\u007f\",\"n\":1" + MESSAGES + "}");
        assertThat(codec.peek(codec.rewriteModel(body, peek, "modèle\\1\t\u007f")).model()).isEqualTo("modèle\\1\t\u007f");
    }

    @Test
    void rewriteModelOnFixtureLeavesTheRestOfTheDocumentEqual()
    {
        byte[] body = Fixtures.bytes("request-tools.json");
        byte[] rewritten = codec.rewriteModel(body, codec.peek(body), "o3");
        JsonNode expected = Fixtures.tree(body);
        ((ObjectNode)expected).put("model", "o3");
        assertThat(Fixtures.tree(rewritten)).isEqualTo(expected);
    }

    @Test
    void streamAbsentOrNullMeansNoStream()
    {
        assertThat(codec.peek(utf8("{\"model\":\"m\"" + MESSAGES + "}")).stream()).isFalse();
        assertThat(codec.peek(utf8("{\"model\":\"m\",\"stream\":null" + MESSAGES + "}")).stream()).isFalse();
        assertThat(codec.peek(utf8("{\"stream\":false,\"model\":\"m\"" + MESSAGES + "}")).stream()).isFalse();
    }

    @Test
    void rejectsMalformedJsonWithLineAndColumn()
    {
        GatewayException e = peekFails("{\"model\":\"gpt-4o\",}");
        assertThat(e.kind()).isEqualTo(ErrorKind.INVALID_REQUEST);
        assertThat(e.status()).isEqualTo(400);
        assertThat(e.getMessage()).startsWith("request body is not valid JSON: Unexpected character")
            .endsWith("at line 1, column 19")
            .doesNotContain("Source");
    }

    @Test
    void rejectsTruncatedJson()
    {
        GatewayException e = peekFails("{\"model\":\"gpt-4o\",\"messages\":[");
        assertThat(e.getMessage()).startsWith("request body is not valid JSON: Unexpected end-of-input").doesNotContain("Source");
    }

    @Test
    void rejectsMalformedJsonAfterTheModelBecauseTheWholeDocumentIsChecked()
    {
        GatewayException e = peekFails("{\"model\":\"gpt-4o\",\"messages\":[{\"role\":\"user\" \"content\":\"x\"}]}");
        assertThat(e.getMessage()).startsWith("request body is not valid JSON:").endsWith("at line 1, column 46");
    }

    @Test
    void doesNotEchoLargeContentInSyntaxErrors()
    {
        String big = "x".repeat(100_000);
        GatewayException e = peekFails("{\"model\":\"m\",\"messages\":" + big + "}");
        assertThat(e.getMessage()).hasSizeLessThan(400);
    }

    @Test
    void rejectsTrailingContent()
    {
        GatewayException e = peekFails("{\"model\":\"m\"} {\"model\":\"n\"}");
        assertThat(e.getMessage()).isEqualTo(
            "request body is not valid JSON: unexpected content after the end of the document at line 1, column 15");
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "   "})
    void rejectsEmptyBody(String body)
    {
        assertThat(peekFails(body).getMessage()).isEqualTo("request body is empty (expected: a JSON object)");
    }

    @Test
    void rejectsTopLevelArray()
    {
        assertThat(peekFails("[{\"model\":\"m\"}]").getMessage())
            .isEqualTo("request body: value: an array (expected: a JSON object)");
    }

    @Test
    void rejectsMissingModelNamingTheField()
    {
        GatewayException e = peekFails("{\"messages\":[]}");
        assertThat(e.getMessage()).isEqualTo("model: must be a non-empty string");
        assertThat(e.param()).isEqualTo("model");
    }

    @ParameterizedTest
    @ValueSource(strings = {"{\"model\":\"\"}", "{\"model\":\"  \"}", "{\"model\":null}"})
    void rejectsBlankModel(String body)
    {
        assertThat(peekFails(body).getMessage()).isEqualTo("model: must be a non-empty string");
    }

    @Test
    void rejectsModelOfWrongType()
    {
        assertThat(peekFails("{\"model\":7}").getMessage()).isEqualTo("model: value: 7 (expected: a non-empty string)");
        assertThat(peekFails("{\"model\":{\"name\":\"x\"}}").getMessage())
            .isEqualTo("model: value: an object (expected: a non-empty string)");
    }

    @Test
    void rejectsDuplicateModelSoRoutingAndUpstreamCannotDisagree()
    {
        GatewayException e = peekFails("{\"model\":\"cheap\",\"model\":\"expensive\"}");
        assertThat(e.getMessage()).isEqualTo("model: appears twice (expected: one model field)");
    }

    @Test
    void rejectsNonBooleanStream()
    {
        GatewayException e = peekFails("{\"model\":\"m\",\"stream\":\"yes\"}");
        assertThat(e.getMessage()).isEqualTo("stream: value: \"yes\" (expected: true or false)");
        assertThat(e.param()).isEqualTo("stream");
        assertThat(peekFails("{\"model\":\"m\",\"stream\":1}").getMessage())
            .isEqualTo("stream: value: 1 (expected: true or false)");
    }

    @Test
    void rejectsNestingDeeperThanTheLimit()
    {
        String deep = "[".repeat(Json.MAX_DEPTH + 5) + "]".repeat(Json.MAX_DEPTH + 5);
        GatewayException e = peekFails("{\"model\":\"m\",\"messages\":" + deep + "}");
        assertThat(e.kind()).isEqualTo(ErrorKind.INVALID_REQUEST);
        assertThat(e.getMessage())
            .startsWith("request body is nested too deeply (expected: at most 64 levels of arrays and objects)");
    }

    @Test
    void acceptsNestingAtTheLimit()
    {
        // The top-level object is level 1.
        String deep = "[".repeat(Json.MAX_DEPTH - 1) + "]".repeat(Json.MAX_DEPTH - 1);
        assertThat(codec.peek(utf8("{\"model\":\"m\",\"x\":" + deep + MESSAGES + "}")).model()).isEqualTo("m");
    }

    @ParameterizedTest
    @ValueSource(strings = {
        "{\"model\":\"m\"}|messages: must be set (expected: a non-empty array of messages)",
        "{\"model\":\"m\",\"messages\":null}|messages: must be set (expected: a non-empty array of messages)",
        "{\"model\":\"m\",\"messages\":\"hi\"}|messages: value: \"hi\" (expected: a non-empty array of messages)",
        "{\"messages\":{\"role\":\"user\"},\"model\":\"m\"}|messages: value: an object (expected: a non-empty array of messages)",
        "{\"model\":\"m\",\"messages\":[]}|messages: must not be empty (expected: at least one message)",
        "{\"model\":\"m\",\"messages\":[{\"role\":\"user\"},\"hi\"]}|messages[1]: value: \"hi\" (expected: an object with a string role)",
        "{\"model\":\"m\",\"messages\":[{\"content\":\"hi\"}]}|messages[0].role: must be set (expected: a string)",
        "{\"model\":\"m\",\"messages\":[{\"role\":7,\"content\":\"hi\"}]}|messages[0].role: value: 7 (expected: a string)",
        "{\"model\":\"m\",\"messages\":[{\"role\":\"user\"}],\"messages\":[]}|messages: appears twice (expected: one messages field)",
    })
    void rejectsMessagesThatCannotBeValidNamingTheField(String caseText)
    {
        String[] parts = caseText.split("\\|");
        GatewayException e = peekFails(parts[0]);
        assertThat(e.kind()).isEqualTo(ErrorKind.INVALID_REQUEST);
        assertThat(e.status()).isEqualTo(400);
        assertThat(e.getMessage()).isEqualTo(parts[1]);
        assertThat(e.param()).startsWith("messages");
    }

    @Test
    void reportsSyntaxThenModelThenMessagesWhateverTheFieldOrder()
    {
        assertThat(peekFails("{\"messages\":[],\"model\":7}").getMessage()).startsWith("model:");
        assertThat(peekFails("{\"messages\":\"hi\",\"model\":\"m\",}").getMessage()).startsWith("request body is not valid JSON");
        assertThat(peekFails("{\"messages\":[]}").getMessage()).startsWith("model:");
    }

    @Test
    void acceptsMessagesWithAnyStringRoleAndAnyOtherFields()
    {
        // Which roles exist is the decoder's (or the provider's) to say; the peek only refuses what cannot be valid.
        RequestPeek peek = codec.peek(utf8("{\"messages\":[{\"content\":[{\"type\":\"text\",\"text\":\"a\"}],\"role\":\"user\"},"
            + "{\"role\":\"whoever\",\"extra\":{\"role\":1}}],\"model\":\"m\",\"stream\":true}"));
        assertThat(peek.model()).isEqualTo("m");
        assertThat(peek.stream()).isTrue();
    }
}
