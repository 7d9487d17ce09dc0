package dev.sluice.examples.ollama;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.sluice.api.codec.DialectCodec.ModelListCodec;
import dev.sluice.support.json.Json;

import java.io.UncheckedIOException;
import java.util.List;

/**
 * Ollama's model listing, {@code GET /api/tags}: {@code {"models":[{"name":…,"model":…,"modified_at":…,"size":0,
 * "digest":"","details":{}}]}}. The gateway knows a model by its name only, so the rest is empty. The runtime sends a
 * listing through the chain; the router answers it with the models the caller's key may use, written here. Stateless.
 */
final class OllamaModels implements ModelListCodec
{
    static final OllamaModels INSTANCE = new OllamaModels();

    private OllamaModels()
    {
    }

    @Override
    public byte[] encodeList(List<String> models)
    {
        ObjectNode root = Json.MAPPER.createObjectNode();
        ArrayNode list = root.putArray("models");
        for (String model : models)
            model(list.addObject(), model);
        return bytes(root);
    }

    @Override
    public byte[] encodeModel(String model)
    {
        return bytes(model(Json.MAPPER.createObjectNode(), model));
    }

    private static ObjectNode model(ObjectNode node, String model)
    {
        node.put("name", model).put("model", model).put("modified_at", "1970-01-01T00:00:00Z").put("size", 0)
            .put("digest", "");
        node.putObject("details");
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
