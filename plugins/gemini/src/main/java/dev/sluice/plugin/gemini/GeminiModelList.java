package dev.sluice.plugin.gemini;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.sluice.api.codec.DialectCodec.ModelListCodec;
import dev.sluice.support.dialect.QueryParameters;
import dev.sluice.support.json.Json;
import dev.sluice.support.json.JsonInput;

import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.List;

/**
 * Gemini's model listings: {@code GET /v1beta/models} as {@code {"models":[{"name":"models/…","displayName":…,
 * "supportedGenerationMethods":[…]}],"nextPageToken":…}} and {@code GET /v1beta/models/{model}} as one such model. A
 * tuned model ({@code tunedModels/{id}}) is listed by that name. The gateway knows a model by its name only; the
 * methods listed are the ones this gateway serves in the Gemini dialect.
 *
 * <p>Pages follow Gemini's parameters: {@code pageSize} models (unset or 0: {@value #DEFAULT_PAGE_SIZE}; more than
 * {@value #MAX_PAGE_SIZE}: {@value #MAX_PAGE_SIZE}, as Gemini caps it; negative or not an integer: a 400) from the
 * start, or after the place a {@code pageToken} marks. A page followed by more models carries {@code nextPageToken}
 * (the last page has none): the URL-safe base64 of the page's last model name, so it keeps its place while the
 * listing stays the same. A token this codec did not write, or whose model is not in the listing, is a 400.
 * Stateless.
 */
final class GeminiModelList implements ModelListCodec
{
    static final GeminiModelList INSTANCE = new GeminiModelList();
    static final int DEFAULT_PAGE_SIZE = 50;
    static final int MAX_PAGE_SIZE = 1000;
    private static final List<String> METHODS = List.of(GeminiServer.GENERATE, GeminiServer.STREAM, GeminiServer.COUNT,
        GeminiServer.EMBED, GeminiServer.BATCH_EMBED);

    private GeminiModelList()
    {
    }

    @Override
    public byte[] encodeList(List<String> models)
    {
        return page(models, null);
    }

    /**
     * {@inheritDoc}
     *
     * @throws dev.sluice.api.GatewayException {@code INVALID_REQUEST} for a {@code pageSize} that is negative or not an
     *                                         integer, or a {@code pageToken} that marks no place in the listing
     */
    @Override
    public byte[] encodePage(List<String> models, String query)
    {
        int size = pageSize(QueryParameters.first(query, "pageSize"));
        String token = QueryParameters.first(query, "pageToken");
        int from = token == null || token.isEmpty() ? 0 : after(token, models);
        int to = (int)Math.min(models.size(), (long)from + size);
        String next = to < models.size() ? token(models.get(to - 1)) : null;
        return page(models.subList(from, to), next);
    }

    @Override
    public byte[] encodeModel(String model)
    {
        return bytes(model(Json.MAPPER.createObjectNode(), model));
    }

    /** @return the page size {@code value} asks for: Gemini's default when it is unset or 0, its cap above that */
    private static int pageSize(String value)
    {
        if (value == null || value.isEmpty())
            return DEFAULT_PAGE_SIZE;
        try
        {
            long size = Long.parseLong(value);
            if (size >= 0)
                return size == 0 ? DEFAULT_PAGE_SIZE : (int)Math.min(size, MAX_PAGE_SIZE);
        }
        catch (NumberFormatException e)
        {
            // Refused below, with the value shown.
        }
        throw JsonInput.REQUEST.fail("pageSize", "value: " + JsonInput.shortString(value) + " (expected: an integer from"
            + " 0 to " + MAX_PAGE_SIZE + "; 0 or unset means " + DEFAULT_PAGE_SIZE + ")");
    }

    /** @return the index after the model {@code token} marks */
    private static int after(String token, List<String> models)
    {
        int index = -1;
        try
        {
            index = models.indexOf(new String(Base64.getUrlDecoder().decode(token), StandardCharsets.UTF_8));
        }
        catch (IllegalArgumentException e)
        {
            // Not base64: refused below like a token of a model that is not listed.
        }
        if (index < 0)
            throw JsonInput.REQUEST.fail("pageToken", "value: " + JsonInput.shortString(token) + " marks no place in"
                + " this listing (expected: the nextPageToken of a previous page, with the same key)");
        return index + 1;
    }

    private static String token(String model)
    {
        return Base64.getUrlEncoder().withoutPadding().encodeToString(model.getBytes(StandardCharsets.UTF_8));
    }

    private static byte[] page(List<String> models, String next)
    {
        ObjectNode list = Json.MAPPER.createObjectNode();
        ArrayNode data = list.putArray("models");
        for (String model : models)
            model(data.addObject(), model);
        if (next != null)
            list.put("nextPageToken", next);
        return bytes(list);
    }

    private static ObjectNode model(ObjectNode node, String model)
    {
        node.put("name", GeminiModelNames.resourceName(model)).put("displayName", model);
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
