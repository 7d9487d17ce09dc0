package dev.sluice.plugin.gemini;

import com.fasterxml.jackson.databind.JsonNode;
import dev.sluice.api.ErrorKind;
import dev.sluice.api.GatewayException;
import dev.sluice.api.codec.RequestPeek;
import dev.sluice.api.model.ChatRequest;
import dev.sluice.api.model.ChatRequest.ResponseFormat;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/**
 * Gemini's OpenAPI-subset schemas ({@code parameters}, {@code responseSchema}) decode to JSON Schema, the canonical
 * schema language, so that OpenAI and Anthropic accept them; JSON Schema spellings pass unchanged. Checked through the
 * codec, as a client's request goes.
 */
class GeminiSchemasTest
{
    private final GeminiCodec codec = GeminiCodec.INSTANCE;

    private ChatRequest decode(String json)
    {
        return codec.decodeRequest(Fixtures.utf8(json), new RequestPeek("gemini-2.5-flash", false, -1, -1));
    }

    /** @return the canonical parameters of the one function declared with {@code declaration} */
    private JsonNode parameters(String declaration)
    {
        ChatRequest r = decode("{\"contents\":[{\"parts\":[{\"text\":\"x\"}]}],"
            + "\"tools\":[{\"functionDeclarations\":[" + declaration + "]}]}");
        assertThat(r.tools()).hasSize(1);
        return r.tools().get(0).parameters();
    }

    private JsonNode convertedParameters(String schema)
    {
        return parameters("{\"name\":\"f\",\"parameters\":" + schema + "}");
    }

    private GatewayException fails(String schema)
    {
        return catchThrowableOfType(GatewayException.class, () -> convertedParameters(schema));
    }

    @Test
    void upperCaseTypesBecomeJsonSchemaTypesInNestedObjectsAndArrays()
    {
        JsonNode converted = convertedParameters("""
            {"type":"OBJECT","description":"A booking.",
             "properties":{
               "guests":{"type":"INTEGER","format":"int32","minimum":1,"maximum":12},
               "when":{"type":"STRING","format":"date-time"},
               "dishes":{"type":"ARRAY","minItems":"1","maxItems":5,
                         "items":{"type":"OBJECT","properties":{"name":{"type":"STRING"},"vegan":{"type":"BOOLEAN"},
                                                                "price":{"type":"NUMBER"}},
                                  "required":["name"]}}},
             "required":["guests","when"]}""");

        assertThat(converted).isEqualTo(Fixtures.tree("""
            {"type":"object","description":"A booking.",
             "properties":{
               "guests":{"type":"integer","format":"int32","minimum":1,"maximum":12},
               "when":{"type":"string","format":"date-time"},
               "dishes":{"type":"array","minItems":1,"maxItems":5,
                         "items":{"type":"object","properties":{"name":{"type":"string"},"vegan":{"type":"boolean"},
                                                                "price":{"type":"number"}},
                                  "required":["name"]}}},
             "required":["guests","when"]}"""));
    }

    @Test
    void nullableBecomesATypeUnionWithNullAndJoinsAnEnum()
    {
        JsonNode converted = convertedParameters("""
            {"type":"OBJECT","properties":{
               "movie":{"type":"STRING","nullable":true},
               "unit":{"type":"STRING","format":"enum","enum":["celsius","fahrenheit"],"nullable":true},
               "tags":{"type":"ARRAY","items":{"type":"STRING"},"nullable":true},
               "strict":{"type":"BOOLEAN","nullable":false}}}""");

        assertThat(converted.at("/properties/movie")).isEqualTo(Fixtures.tree("{\"type\":[\"string\",\"null\"]}"));
        assertThat(converted.at("/properties/unit")).isEqualTo(Fixtures.tree(
            "{\"type\":[\"string\",\"null\"],\"format\":\"enum\",\"enum\":[\"celsius\",\"fahrenheit\",null]}"));
        assertThat(converted.at("/properties/tags"))
            .isEqualTo(Fixtures.tree("{\"type\":[\"array\",\"null\"],\"items\":{\"type\":\"string\"}}"));
        assertThat(converted.at("/properties/strict")).isEqualTo(Fixtures.tree("{\"type\":\"boolean\"}"));
    }

    @Test
    void anyOfBranchesAreConvertedAndANullableAnyOfGetsANullBranch()
    {
        JsonNode converted = convertedParameters("""
            {"type":"OBJECT","properties":{
               "id":{"anyOf":[{"type":"STRING"},{"type":"INTEGER"}],"nullable":true},
               "shape":{"any_of":[{"type":"OBJECT","properties":{"r":{"type":"NUMBER"}}},
                                  {"type":"OBJECT","properties":{"w":{"type":"NUMBER"},"h":{"type":"NUMBER"}}}]}}}""");

        assertThat(converted.at("/properties/id")).isEqualTo(Fixtures.tree(
            "{\"anyOf\":[{\"type\":\"string\"},{\"type\":\"integer\"},{\"type\":\"null\"}]}"));
        assertThat(converted.at("/properties/shape")).isEqualTo(Fixtures.tree("""
            {"anyOf":[{"type":"object","properties":{"r":{"type":"number"}}},
                      {"type":"object","properties":{"w":{"type":"number"},"h":{"type":"number"}}}]}"""));
    }

    @Test
    void propertyOrderingOrdersThePropertiesAndExampleBecomesExamples()
    {
        JsonNode converted = convertedParameters("""
            {"type":"OBJECT","title":"Point","propertyOrdering":["y","x"],"example":{"x":1,"y":2},
             "properties":{"x":{"type":"NUMBER","default":0},"y":{"type":"NUMBER","pattern":"^-?[0-9]+$"},
                           "z":{"type":"NUMBER","min_length":"2","max_properties":3,"minProperties":1}}}""");

        assertThat(converted).isEqualTo(Fixtures.tree("""
            {"type":"object","title":"Point","examples":[{"x":1,"y":2}],
             "properties":{"y":{"type":"number","pattern":"^-?[0-9]+$"},"x":{"type":"number","default":0},
                           "z":{"type":"number","minLength":2,"maxProperties":3,"minProperties":1}}}"""));
        assertThat(converted.get("properties").fieldNames()).toIterable().containsExactly("y", "x", "z");
    }

    @Test
    void typeNamesAreReadInAnyCaseAndTypeUnspecifiedIsNoType()
    {
        assertThat(convertedParameters("{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"String\"},"
            + "\"b\":{\"type\":\"TYPE_UNSPECIFIED\",\"description\":\"anything\"}}}"))
            .isEqualTo(Fixtures.tree("{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"string\"},"
                + "\"b\":{\"description\":\"anything\"}}}"));
    }

    @Test
    void jsonSchemaKeywordsTheOpenApiSubsetLacksPassUnchanged()
    {
        assertThat(convertedParameters("{\"type\":\"OBJECT\",\"additionalProperties\":false,"
            + "\"properties\":{\"a\":{\"type\":\"STRING\",\"const\":\"x\"}}}"))
            .isEqualTo(Fixtures.tree("{\"type\":\"object\",\"additionalProperties\":false,"
                + "\"properties\":{\"a\":{\"type\":\"string\",\"const\":\"x\"}}}"));
    }

    @Test
    void parametersJsonSchemaPassesUnchanged()
    {
        String schema = "{\"type\":\"object\",\"properties\":{\"a\":{\"type\":[\"string\",\"null\"],\"nullable\":true,"
            + "\"format\":\"OBJECT\"}},\"$defs\":{\"x\":{\"type\":\"string\"}}}";
        assertThat(parameters("{\"name\":\"f\",\"parametersJsonSchema\":" + schema + "}"))
            .isEqualTo(Fixtures.tree(schema));
        assertThat(parameters("{\"name\":\"f\",\"parameters_json_schema\":" + schema + "}"))
            .isEqualTo(Fixtures.tree(schema));
    }

    @Test
    void responseSchemaBecomesAJsonSchemaResponseFormatAndResponseJsonSchemaPasses()
    {
        ChatRequest r = decode("""
            {"contents":[{"parts":[{"text":"x"}]}],
             "generationConfig":{"responseMimeType":"application/json",
               "responseSchema":{"type":"ARRAY","items":{"type":"OBJECT","properties":{
                 "name":{"type":"STRING"},"rating":{"type":"INTEGER","nullable":true}},
                 "propertyOrdering":["rating","name"]}}}}""");

        assertThat(r.responseFormat().type()).isEqualTo(ResponseFormat.Type.JSON_SCHEMA);
        assertThat(r.responseFormat().schema()).isEqualTo(Fixtures.tree("""
            {"type":"array","items":{"type":"object","properties":{
               "rating":{"type":["integer","null"]},"name":{"type":"string"}}}}"""));
        assertThat(r.extensions()).isEmpty();

        String jsonSchema = "{\"type\":\"object\",\"properties\":{\"n\":{\"type\":[\"integer\",\"null\"]}}}";
        ChatRequest passed = decode("{\"contents\":[],\"generationConfig\":{\"responseMimeType\":\"application/json\","
            + "\"responseJsonSchema\":" + jsonSchema + "}}");
        assertThat(passed.responseFormat().schema()).isEqualTo(Fixtures.tree(jsonSchema));
    }

    @Test
    void encodesEveryCanonicalSchemaAsJsonSchemaTowardGemini()
    {
        byte[] encoded = codec.encodeRequest(decode("""
            {"contents":[{"parts":[{"text":"x"}]}],
             "tools":[{"functionDeclarations":[{"name":"f","parameters":{"type":"OBJECT",
                "properties":{"a":{"type":"STRING","nullable":true}}}}]}],
             "generationConfig":{"responseMimeType":"application/json","responseSchema":{"type":"STRING"}}}"""));

        JsonNode body = Fixtures.tree(encoded);
        assertThat(body.at("/tools/0/functionDeclarations/0")).isEqualTo(Fixtures.tree(
            "{\"name\":\"f\",\"parametersJsonSchema\":{\"type\":\"object\","
                + "\"properties\":{\"a\":{\"type\":[\"string\",\"null\"]}}}}"));
        assertThat(body.get("generationConfig")).isEqualTo(Fixtures.tree(
            "{\"responseMimeType\":\"application/json\",\"responseJsonSchema\":{\"type\":\"string\"}}"));
    }

    @Test
    void rejectsAnUnknownTypeNamingItsPath()
    {
        GatewayException e = fails("{\"type\":\"OBJECT\",\"properties\":{\"items\":{\"type\":\"ARRAY\","
            + "\"items\":{\"type\":\"TEXT\"}}}}");

        assertThat(e.kind()).isEqualTo(ErrorKind.INVALID_REQUEST);
        assertThat(e.status()).isEqualTo(400);
        assertThat(e.param()).isEqualTo("tools[0].functionDeclarations[0].parameters.properties.items.items.type");
        assertThat(e.getMessage()).isEqualTo("tools[0].functionDeclarations[0].parameters.properties.items.items.type:"
            + " value: \"TEXT\" (expected: one of: STRING, NUMBER, INTEGER, BOOLEAN, ARRAY, OBJECT, NULL,"
            + " TYPE_UNSPECIFIED)");
    }

    @Test
    void rejectsMisshapenSchemaFieldsNamingTheirPath()
    {
        assertThat(fails("{\"type\":[\"OBJECT\",\"NULL\"]}").getMessage())
            .startsWith("tools[0].functionDeclarations[0].parameters.type: value: an array (expected: one of: STRING");
        assertThat(fails("{\"type\":\"OBJECT\",\"properties\":{\"a\":\"STRING\"}}").getMessage())
            .isEqualTo("tools[0].functionDeclarations[0].parameters.properties.a: value: \"STRING\" (expected: an object)");
        assertThat(fails("{\"type\":\"OBJECT\",\"nullable\":\"yes\"}").getMessage())
            .isEqualTo("tools[0].functionDeclarations[0].parameters.nullable: value: \"yes\" (expected: true or false)");
        assertThat(fails("{\"type\":\"ARRAY\",\"minItems\":-1}").getMessage())
            .isEqualTo("tools[0].functionDeclarations[0].parameters.minItems: value: -1 (expected: a non-negative integer)");
        assertThat(fails("{\"type\":\"OBJECT\",\"required\":[\"a\",1]}").getMessage())
            .isEqualTo("tools[0].functionDeclarations[0].parameters.required[1]: value: 1 (expected: a string)");
        assertThat(fails("{\"anyOf\":{\"type\":\"STRING\"}}").getMessage())
            .isEqualTo("tools[0].functionDeclarations[0].parameters.anyOf: value: an object (expected: an array of schemas)");
        assertThat(fails("{\"type\":\"STRING\",\"min_length\":1,\"minLength\":2}").getMessage())
            .isEqualTo("tools[0].functionDeclarations[0].parameters.min_length: is set twice, as minLength and min_length");

        GatewayException response = catchThrowableOfType(GatewayException.class, () -> decode(
            "{\"contents\":[],\"generationConfig\":{\"responseMimeType\":\"application/json\","
                + "\"responseSchema\":{\"type\":\"OBJECT\",\"properties\":{\"n\":{\"type\":\"FLOAT\"}}}}}"));
        assertThat(response.getMessage()).startsWith(
            "generationConfig.responseSchema.properties.n.type: value: \"FLOAT\" (expected: one of: STRING,");
    }
}
