package dev.sluice.plugin.anthropic;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.sluice.api.codec.DialectCodec.ModelListCodec;
import dev.sluice.support.json.Json;

import java.io.UncheckedIOException;
import java.util.List;

/**
 * Anthropic's model listings: {@code GET /v1/models} as one page {@code {"data":[{"type":"model","id":…,
 * "display_name":…,"created_at":…}],"has_more":false,"first_id":…,"last_id":…}} and {@code GET /v1/models/{model}}
 * as one such model. The gateway knows a model by its name only: the display name is the name and
 * {@code created_at} the epoch. Stateless.
 */
final class AnthropicModelList implements ModelListCodec
{
    static final AnthropicModelList INSTANCE = new AnthropicModelList();
    private static final String EPOCH = "1970-01-01T00:00:00Z";

    private AnthropicModelList()
    {
    }

    @Override
    public byte[] encodeList(List<String> models)
    {
        ObjectNode page = Json.MAPPER.createObjectNode();
        ArrayNode data = page.putArray("data");
        for (String model : models)
            model(data.addObject(), model);
        page.put("has_more", false);
        if (models.isEmpty())
        {
            page.putNull("first_id");
            page.putNull("last_id");
        }
        else
        {
            page.put("first_id", models.get(0));
            page.put("last_id", models.get(models.size() - 1));
        }
        return bytes(page);
    }

    @Override
    public byte[] encodeModel(String model)
    {
        return bytes(model(Json.MAPPER.createObjectNode(), model));
    }

    private static ObjectNode model(ObjectNode node, String model)
    {
        return node.put("type", "model").put("id", model).put("display_name", model).put("created_at", EPOCH);
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
