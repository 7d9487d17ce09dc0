package dev.sluice.plugin.gemini;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.sluice.api.codec.DialectCodec.ModelListCodec;
import dev.sluice.support.json.Json;

import java.io.UncheckedIOException;
import java.util.List;

/**
 * Gemini's model listings: {@code GET /v1beta/models} as {@code {"models":[{"name":"models/…","displayName":…,
 * "supportedGenerationMethods":[…]}]}} (one page, no {@code nextPageToken}) and {@code GET /v1beta/models/{model}} as
 * one such model. The gateway knows a model by its name only; the methods listed are the ones this gateway serves in
 * the Gemini dialect. Stateless.
 */
final class GeminiModelList implements ModelListCodec
{
    static final GeminiModelList INSTANCE = new GeminiModelList();
    private static final List<String> METHODS = List.of(GeminiServer.GENERATE, GeminiServer.STREAM, GeminiServer.COUNT,
        GeminiServer.EMBED, GeminiServer.BATCH_EMBED);

    private GeminiModelList()
    {
    }

    @Override
    public byte[] encodeList(List<String> models)
    {
        ObjectNode list = Json.MAPPER.createObjectNode();
        ArrayNode data = list.putArray("models");
        for (String model : models)
            model(data.addObject(), model);
        return bytes(list);
    }

    @Override
    public byte[] encodeModel(String model)
    {
        return bytes(model(Json.MAPPER.createObjectNode(), model));
    }

    private static ObjectNode model(ObjectNode node, String model)
    {
        node.put("name", "models/" + model).put("displayName", model);
        ArrayNode methods = node.putArray("supportedGenerationMethods");
        METHODS.forEach(methods::add);
        return node;
    }

    private static byte[] bytes(ObjectNode node)
    {
        try
        {
            return Json.MAPPER.writeValueAsBytes(node);
        }
        catch (JsonProcessingException e)
        {
            throw new UncheckedIOException(e);
        }
    }
}
