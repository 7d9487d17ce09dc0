package dev.sluice.support.json;

import com.fasterxml.jackson.core.JsonParser;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.charset.StandardCharsets;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;

class JsonValidatorTest
{
    private static boolean valid(String s)
    {
        byte[] bytes = s.getBytes(StandardCharsets.UTF_8);
        // Framed in other bytes: the range, not the array, is what is checked.
        byte[] framed = new byte[bytes.length + 4];
        framed[0] = 'x';
        framed[1] = '{';
        System.arraycopy(bytes, 0, framed, 2, bytes.length);
        framed[framed.length - 2] = '"';
        framed[framed.length - 1] = ']';
        boolean inFrame = JsonValidator.isValid(framed, 2, bytes.length);
        assertThat(JsonValidator.isValid(bytes)).as(s).isEqualTo(inFrame);
        return inFrame;
    }

    @ParameterizedTest
    @ValueSource(strings = {"{}", "[]", " {\"a\" : [1, -2.5e+3, 0, 0.1, 1E9, true, false, null, \"\"]}\r\n", "\"x\"", "0",
        "-0", "1e-7", "[[[]]]", "{\"a\":{\"b\":{}}}", "\"\\u00e9\\n\\\"\\\\\\/\\b\\f\\r\\t\"", "\"é漢字😀\"",
        "{\"id\":\"chatcmpl-1\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hi\"},\"finish_reason\":null}]}"})
    void acceptsJson(String json)
    {
        assertThat(valid(json)).isTrue();
    }

    @ParameterizedTest
    @ValueSource(strings = {"", " ", "{", "}", "[", "[1,]", "{\"a\":1,}", "{\"a\"}", "{\"a\":}", "{a:1}", "{'a':1}",
        "[1 2]", "01", "1.", ".5", "-", "1e", "+1", "NaN", "tru", "nul", "falsy", "True", "\"abc", "\"a\\x\"",
        "\"\\u12\"", "\"\\u12G4\"", "\"a\tb\"", "{} {}", "[]]", "{]", "[}", "<html>", "{\"id\":\"chatcmpl-1\",\"ch",
        "{\"a\":1}x", "[\"a\",]"})
    void rejectsWhatIsNotJson(String text)
    {
        assertThat(valid(text)).isFalse();
    }

    @Test
    void rejectsMalformedUtf8InStrings()
    {
        assertThat(JsonValidator.isValid(new byte[]{'"', (byte)0xC3, (byte)0xA9, '"'})).isTrue();
        assertThat(JsonValidator.isValid(new byte[]{'"', (byte)0xC3, '"'})).as("truncated").isFalse();
        assertThat(JsonValidator.isValid(new byte[]{'"', (byte)0xC0, (byte)0xAF, '"'})).as("overlong").isFalse();
        assertThat(JsonValidator.isValid(new byte[]{'"', (byte)0xED, (byte)0xA0, (byte)0x80, '"'})).as("surrogate")
            .isFalse();
        assertThat(JsonValidator.isValid(new byte[]{'"', (byte)0xF4, (byte)0x90, (byte)0x80, (byte)0x80, '"'}))
            .as("over U+10FFFF").isFalse();
        assertThat(JsonValidator.isValid(new byte[]{'"', (byte)0xFF, '"'})).isFalse();
        assertThat(JsonValidator.isValid(new byte[]{(byte)0x89, 'P', 'N', 'G'})).isFalse();
    }

    @Test
    void acceptsNestingUpToTheSharedLimit()
    {
        String deepest = "[".repeat(Json.MAX_DEPTH) + "]".repeat(Json.MAX_DEPTH);
        assertThat(valid(deepest)).isTrue();
        assertThat(valid("[" + deepest + "]")).isFalse();
        String objects = "{\"a\":".repeat(Json.MAX_DEPTH - 1) + "{}" + "}".repeat(Json.MAX_DEPTH - 1);
        assertThat(valid(objects)).isTrue();
    }

    @Test
    void agreesWithJacksonOnMutatedJson() throws Exception
    {
        byte[] base = ("{\"id\":\"msg_1\",\"type\":\"message\",\"content\":[{\"type\":\"text\",\"text\":\"Hello, world\"}]," +
            "\"usage\":{\"input_tokens\":12,\"output_tokens\":-9.5e2},\"stop\":null,\"ok\":[true,false]}")
            .getBytes(StandardCharsets.US_ASCII);
        byte[] alphabet = "{}[]\",:0123456789-+.eE tfnrul\\ax".getBytes(StandardCharsets.US_ASCII);
        Random random = new Random(42);
        for (int round = 0; round < 20_000; round++)
        {
            byte[] bytes = base.clone();
            int edits = 1 + random.nextInt(3);
            int length = bytes.length;
            for (int e = 0; e < edits; e++)
            {
                int at = random.nextInt(length);
                if (random.nextBoolean())
                    bytes[at] = alphabet[random.nextInt(alphabet.length)];
                else
                    length = Math.max(1, at);
            }
            assertThat(JsonValidator.isValid(bytes, 0, length)).as(new String(bytes, 0, length, StandardCharsets.US_ASCII))
                .isEqualTo(jackson(bytes, length));
        }
    }

    private static boolean jackson(byte[] bytes, int length)
    {
        try (JsonParser parser = Json.FACTORY.createParser(bytes, 0, length))
        {
            if (parser.nextToken() == null)
                return false;
            parser.skipChildren();
            return parser.nextToken() == null;
        }
        catch (Exception e)
        {
            return false;
        }
    }
}
