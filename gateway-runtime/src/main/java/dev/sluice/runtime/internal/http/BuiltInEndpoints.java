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
 * process serves) and {@code GET /readyz} (it takes traffic: 503 {@code warming} or {@code draining} otherwise); model
 * listings are the dialects' endpoints, answered through the chain. Every body is rendered once, at
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

    /**
     * @param ready   whether the gateway takes traffic
     * @param warming whether it is warming up (what {@code /readyz} says while not ready)
     */
    BuiltInEndpoints(BooleanSupplier ready, BooleanSupplier warming)
    {
        this.ready = ready;
        this.warming = warming;
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
