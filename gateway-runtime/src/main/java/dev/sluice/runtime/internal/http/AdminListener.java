package dev.sluice.runtime.internal.http;

import dev.sluice.api.admin.AdminRoutes.AdminRequest;
import dev.sluice.api.admin.AdminRoutes.AdminResponse;
import dev.sluice.support.json.JsonStrings;
import dev.sluice.runtime.internal.service.RuntimeServices.AdminRoute;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpHeaderValue;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.Map;
import java.util.concurrent.CompletionStage;

/**
 * The admin listener's handler (docs/configuration.md, "Admin listener"): the bearer token check, the runtime's own endpoints
 * ({@code /healthz}, {@code /_sluice/stages} when enabled) and the endpoints plugins registered. Off the request path:
 * it runs only for connections to the admin port.
 */
final class AdminListener extends Handler.Abstract.NonBlocking
{
    private static final Logger LOG = LoggerFactory.getLogger(AdminListener.class);
    /** The largest admin request body read. */
    static final int MAX_BODY_BYTES = 1 << 20;

    private final Map<String, AdminRoute> routes;
    private final byte[] token;
    private final StageStats stageStats;

    /**
     * @param token      the bearer token every request must carry, or {@code null} for none
     * @param stageStats the per-stage breakdown to serve, or {@code null}
     */
    AdminListener(Map<String, AdminRoute> routes, String token, StageStats stageStats)
    {
        this.routes = Map.copyOf(routes);
        this.token = token == null ? null : token.getBytes(StandardCharsets.UTF_8);
        this.stageStats = stageStats;
    }

    @Override
    public boolean handle(Request request, Response response, Callback callback)
    {
        String method = request.getMethod();
        String path = request.getHttpURI().getPath();
        if (token != null && !authorized(request.getHeaders().get(HttpHeader.AUTHORIZATION)))
        {
            response.getHeaders().put(HttpHeader.WWW_AUTHENTICATE, "Bearer");
            write(response, callback, AdminResponse.json(401, error("this admin endpoint needs Authorization: Bearer <admin.token>")));
            return true;
        }
        if ("GET".equals(method) && "/healthz".equals(path))
        {
            write(response, callback, AdminResponse.json(200, "{\"status\":\"ok\"}"));
            return true;
        }
        if ("GET".equals(method) && "/_sluice/stages".equals(path) && stageStats != null)
        {
            String query = request.getHttpURI().getQuery();
            write(response, callback, AdminResponse.json(200, stageStats.json(query != null && query.contains("reset=true"))));
            return true;
        }
        AdminRoute route = route(method, path);
        if (route == null)
        {
            boolean pathKnown = routes.values().stream().anyMatch(r -> r.path().equals(path) || under(r.path(), path));
            write(response, callback, pathKnown
                ? AdminResponse.json(405, error("method " + method + " is not allowed on " + path))
                : AdminResponse.json(404, error("no admin endpoint at " + method + " " + path)));
            return true;
        }
        long declared = request.getLength();
        if (declared > MAX_BODY_BYTES)
        {
            writeAndClose(response, callback, tooLarge());
            return true;
        }
        // Counted, so that a body without a declared length that passes the cap gets the same 413 as a declared one.
        Counted counted = new Counted(request);
        Content.Source.asByteArrayAsync(counted, MAX_BODY_BYTES).whenComplete((body, readFailure) ->
        {
            if (readFailure != null)
            {
                writeAndClose(response, callback, counted.bytes > MAX_BODY_BYTES ? tooLarge()
                    : AdminResponse.json(400, error("the request body could not be read")));
                return;
            }
            CompletionStage<AdminResponse> answer;
            try
            {
                answer = route.handler().handle(new AdminRequest(method, path, request.getHttpURI().getQuery(),
                    new FieldsHeaders(request.getHeaders()), body));
            }
            catch (Throwable t)
            {
                failed(route, t, response, callback);
                return;
            }
            if (answer == null)
            {
                failed(route, new NullPointerException("the admin handler returned no stage"), response, callback);
                return;
            }
            answer.whenComplete((r, failure) ->
            {
                if (failure != null || r == null)
                    failed(route, failure != null ? failure : new NullPointerException("the admin handler answered null"), response, callback);
                else
                    write(response, callback, r);
            });
        });
        return true;
    }

    /** @return the route of {@code method path}: the exact one, else the longest {@code prefix/*} above it, or {@code null} */
    private AdminRoute route(String method, String path)
    {
        AdminRoute exact = routes.get(method + " " + path);
        if (exact != null)
            return exact;
        for (int slash = path.lastIndexOf('/', path.length() - 2); slash >= 0; slash = path.lastIndexOf('/', slash - 1))
        {
            AdminRoute prefix = routes.get(method + " " + path.substring(0, slash) + "/*");
            if (prefix != null)
                return prefix;
            if (slash == 0)
                break;
        }
        return null;
    }

    /** @return whether {@code routePath} is a {@code prefix/*} route that serves {@code path} */
    private static boolean under(String routePath, String path)
    {
        return routePath.endsWith("/*") && path.length() > routePath.length() - 1
            && path.startsWith(routePath.substring(0, routePath.length() - 1));
    }

    private static AdminResponse tooLarge()
    {
        return AdminResponse.json(413, error("admin request bodies are limited to " + MAX_BODY_BYTES + " bytes"));
    }

    /**
     * Writes {@code r} to a request whose body is left unread (over the cap, or failed), so the connection closes after
     * it: {@code Connection: close} tells the client, which would otherwise send its next request on a connection the
     * gateway is closing and read no answer.
     */
    private static void writeAndClose(Response response, Callback callback, AdminResponse r)
    {
        response.getHeaders().put(HttpHeader.CONNECTION, HttpHeaderValue.CLOSE.asString());
        write(response, callback, r);
    }

    /** The request's content, counting the bytes read from it. */
    private static final class Counted implements Content.Source
    {
        private final Content.Source request;
        // Written by the accumulator's reads, one at a time; read once it failed.
        private volatile long bytes;

        Counted(Content.Source request)
        {
            this.request = request;
        }

        @Override
        public long getLength()
        {
            return request.getLength();
        }

        @Override
        public Content.Chunk read()
        {
            Content.Chunk chunk = request.read();
            if (chunk != null)
                bytes += chunk.remaining();
            return chunk;
        }

        @Override
        public void demand(Runnable demandCallback)
        {
            request.demand(demandCallback);
        }

        @Override
        public void fail(Throwable failure)
        {
            request.fail(failure);
        }

        @Override
        public void fail(Throwable failure, boolean last)
        {
            request.fail(failure, last);
        }
    }

    private boolean authorized(String authorization)
    {
        String presented = dev.sluice.api.binding.ServerBinding.bearerToken(authorization);
        return presented != null && MessageDigest.isEqual(token, presented.getBytes(StandardCharsets.UTF_8));
    }

    private static void failed(AdminRoute route, Throwable t, Response response, Callback callback)
    {
        LOG.error("admin endpoint {} {} of bindings.{} failed", route.method(), route.path(), route.binding(), t);
        write(response, callback, AdminResponse.json(500, error("the admin endpoint failed; see the gateway's log")));
    }

    private static String error(String message)
    {
        return "{\"error\":{\"message\":" + JsonStrings.quote(message) + "}}";
    }

    private static void write(Response response, Callback callback, AdminResponse r)
    {
        try
        {
            response.setStatus(r.status());
            ReplyHeaders.add(response.getHeaders(), r.headers());
            response.getHeaders().put(HttpHeader.CONTENT_TYPE, r.contentType());
            response.getHeaders().put(HttpHeader.CONTENT_LENGTH, r.body().length);
            response.write(true, ByteBuffer.wrap(r.body()), callback);
        }
        catch (Throwable t)
        {
            callback.failed(t);
        }
    }
}
