package dev.sluice.runtime.internal.http;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;

import java.io.UncheckedIOException;
import java.util.List;
import java.util.function.BooleanSupplier;

/**
 * The gateway's own endpoints on its port, answered before any binding sees the request: {@code GET /healthz} (the
 * process serves), {@code GET /readyz} (it takes traffic: 503 {@code warming} or {@code draining} otherwise) and
 * {@code GET /v1/models} (the models the routes name, in OpenAI's list shape). Every body is rendered once, at
 * construction; a request costs a switch on its path and one write. The {@link GatewayHandler} asks it first; it has
 * no lifecycle of its own.
 */
final class BuiltInEndpoints implements Request.Handler
{
    private static final JsonMapper JSON = JsonMapper.builder().build();

    private final BooleanSupplier ready;
    private final BooleanSupplier warming;
    private final byte[] healthy = status("ok");
    private final byte[] readyBody = status("ready");
    private final byte[] warmingBody = status("warming");
    private final byte[] drainingBody = status("draining");
    private final byte[] models;

    /**
     * @param models  the model names {@code /v1/models} lists, in order
     * @param ready   whether the gateway takes traffic
     * @param warming whether it is warming up (what {@code /readyz} says while not ready)
     */
    BuiltInEndpoints(List<String> models, BooleanSupplier ready, BooleanSupplier warming)
    {
        this.ready = ready;
        this.warming = warming;
        ObjectNode list = JSON.createObjectNode().put("object", "list");
        ArrayNode data = list.putArray("data");
        for (String model : models)
            data.addObject().put("id", model).put("object", "model").put("created", 0).put("owned_by", "sluice");
        this.models = bytes(list);
    }

    /** @return whether the request was one of these endpoints, answered; never blocks */
    @Override
    public boolean handle(Request request, Response response, Callback callback)
    {
        if (!"GET".equals(request.getMethod()))
            return false;
        switch (request.getHttpURI().getPath())
        {
            case "/healthz" -> ReplyWriter.writeJson(response, callback, 200, healthy);
            case "/readyz" ->
            {
                boolean ok = ready.getAsBoolean();
                ReplyWriter.writeJson(response, callback, ok ? 200 : 503,
                    ok ? readyBody : warming.getAsBoolean() ? warmingBody : drainingBody);
            }
            case "/v1/models" -> ReplyWriter.writeJson(response, callback, 200, models);
            default ->
            {
                return false;
            }
        }
        return true;
    }

    @Override
    public InvocationType getInvocationType()
    {
        return InvocationType.NON_BLOCKING;
    }

    private static byte[] status(String status)
    {
        return bytes(JSON.createObjectNode().put("status", status));
    }

    private static byte[] bytes(ObjectNode node)
    {
        try
        {
            return JSON.writeValueAsBytes(node);
        }
        catch (JsonProcessingException e)
        {
            throw new UncheckedIOException(e);
        }
    }
}
