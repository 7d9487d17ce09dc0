package dev.sluice.plugin.openai;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.sluice.api.codec.DialectCodec.ModelListCodec;
import dev.sluice.support.json.Json;

import java.io.UncheckedIOException;
import java.util.List;

/**
 * OpenAI's model listings: {@code GET /v1/models} as {@code {"object":"list","data":[{"id":…,"object":"model",
 * "created":0,"owned_by":"sluice"}]}} and {@code GET /v1/models/{model}} as one such model. The gateway knows a model
 * by its name only: {@code created} is 0 and {@code owned_by} is {@code sluice}. Stateless.
 */
final class OpenAiModelList implements ModelListCodec
{
    static final OpenAiModelList INSTANCE = new OpenAiModelList();

    private OpenAiModelList()
    {
    }

    @Override
    public byte[] encodeList(List<String> models)
    {
        ObjectNode list = Json.MAPPER.createObjectNode().put("object", "list");
        ArrayNode data = list.putArray("data");
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
        return node.put("id", model).put("object", "model").put("created", 0).put("owned_by", "sluice");
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
