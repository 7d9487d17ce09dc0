package dev.sluice.plugin.anthropic;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.sluice.api.codec.DialectCodec.ModelListCodec;
import dev.sluice.support.dialect.QueryParameters;
import dev.sluice.support.json.Json;
import dev.sluice.support.json.JsonInput;

import java.io.UncheckedIOException;
import java.util.List;

/**
 * Anthropic's model listings: {@code GET /v1/models} as a page {@code {"data":[{"type":"model","id":…,
 * "display_name":…,"created_at":…}],"has_more":…,"first_id":…,"last_id":…}} and {@code GET /v1/models/{model}}
 * as one such model. The gateway knows a model by its name only: the display name is the name and
 * {@code created_at} the epoch.
 *
 * <p>Pages follow Anthropic's parameters: {@code limit} models (default {@value #DEFAULT_LIMIT}, 1 to
 * {@value #MAX_LIMIT}) from the start of the listing, or immediately after the model {@code after_id} names, or
 * immediately before the one {@code before_id} names (at most one of the two); {@code has_more} says whether models
 * are left in that direction, {@code first_id} and {@code last_id} are the cursors of the previous and next page. A
 * cursor is a model's id, so it keeps its place while the listing stays the same. Stateless.
 */
final class AnthropicModelList implements ModelListCodec
{
    static final AnthropicModelList INSTANCE = new AnthropicModelList();
    static final int DEFAULT_LIMIT = 20;
    static final int MAX_LIMIT = 1000;
    private static final String EPOCH = "1970-01-01T00:00:00Z";

    private AnthropicModelList()
    {
    }

    @Override
    public byte[] encodeList(List<String> models)
    {
        return page(models, false);
    }

    /**
     * {@inheritDoc}
     *
     * @throws dev.sluice.api.GatewayException {@code INVALID_REQUEST} for a {@code limit} that is not an integer from 1
     *                                         to {@value #MAX_LIMIT}, both cursors at once, or a cursor that names no
     *                                         model of the listing
     */
    @Override
    public byte[] encodePage(List<String> models, String query)
    {
        int limit = limit(QueryParameters.first(query, "limit"));
        String after = QueryParameters.first(query, "after_id");
        String before = QueryParameters.first(query, "before_id");
        if (after != null && before != null)
            throw JsonInput.REQUEST.fail("before_id", "is set with after_id (expected: at most one of after_id and"
                + " before_id)");
        int from;
        int to;
        boolean more;
        if (before != null)
        {
            to = place("before_id", before, models);
            from = Math.max(0, to - limit);
            more = from > 0;
        }
        else
        {
            from = after == null ? 0 : place("after_id", after, models) + 1;
            to = (int)Math.min(models.size(), (long)from + limit);
            more = to < models.size();
        }
        return page(models.subList(from, to), more);
    }

    /** @return the page size {@code value} asks for, {@value #DEFAULT_LIMIT} when it is absent */
    private static int limit(String value)
    {
        if (value == null)
            return DEFAULT_LIMIT;
        try
        {
            int limit = Integer.parseInt(value);
            if (limit >= 1 && limit <= MAX_LIMIT)
                return limit;
        }
        catch (NumberFormatException e)
        {
            // Refused below, with the value shown.
        }
        throw JsonInput.REQUEST.fail("limit", "value: " + JsonInput.shortString(value) + " (expected: an integer from 1"
            + " to " + MAX_LIMIT + ")");
    }

    /** @return the index of the model a cursor names */
    private static int place(String parameter, String id, List<String> models)
    {
        int index = models.indexOf(id);
        if (index < 0)
            throw JsonInput.REQUEST.fail(parameter, "value: " + JsonInput.shortString(id) + " names no model of this"
                + " listing (expected: the first_id or last_id of a page)");
        return index;
    }

    private static byte[] page(List<String> models, boolean more)
    {
        ObjectNode page = Json.MAPPER.createObjectNode();
        ArrayNode data = page.putArray("data");
        for (String model : models)
            model(data.addObject(), model);
        page.put("has_more", more);
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
