package dev.sluice.runtime.internal.http;

import dev.sluice.api.ErrorKind;
import dev.sluice.api.GatewayException;
import dev.sluice.api.codec.DialectCodec;
import dev.sluice.support.json.JsonStrings;
import org.eclipse.jetty.http.HttpException;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpStatus;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.handler.ErrorHandler;
import org.eclipse.jetty.util.Callback;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeoutException;

/**
 * The server's one error handler ({@code Server.setErrorHandler}): every error that Jetty answers itself becomes a
 * JSON body in the dialect of the request's path, OpenAI-shaped where no dialect serves the path, instead of Jetty's
 * HTML or JSON error page.
 *
 * <p>Jetty calls it through {@code Response.writeError}. For a request it could not parse it is called from the
 * connection, before any handler ran, with a stand-in request: a request line or headers over the limit (414, 431),
 * two {@code Content-Length}s or {@code Transfer-Encoding} with {@code Content-Length} (400), {@code HTTP/2.0} in an
 * HTTP/1 request line (426), an unknown HTTP version (505). The stand-in carries the path when Jetty had read the
 * request line (431, 400, 426: the dialect applies), else {@code /badMessage} (414, 505: OpenAI's shape). It is also
 * called for a request refused while draining at shutdown (503, from the {@code GracefulHandler}) and for a handler
 * that failed its callback before committing a response. The connection is kept or closed as Jetty decided (a
 * request it could not parse always closes it).
 *
 * <p>Messages are the gateway's own, by status; Jetty's reason is added only from its {@link HttpException}s (fixed
 * texts such as {@code Multiple Content-Lengths}), never an exception's text, so nothing the client sent (a key in a
 * header, say) and no stack trace is echoed.
 */
final class DialectErrorHandler implements Request.Handler
{
    private static final Logger LOG = LoggerFactory.getLogger(DialectErrorHandler.class);
    private static final int MAX_REASON = 100;

    private final Endpoints endpoints;

    /** @param endpoints the server bindings' endpoints: the dialect of a request's path is the one serving it */
    DialectErrorHandler(Endpoints endpoints)
    {
        this.endpoints = endpoints;
    }

    @Override
    public boolean handle(Request request, Response response, Callback callback)
    {
        Throwable cause = (Throwable)request.getAttribute(ErrorHandler.ERROR_EXCEPTION);
        Object attribute = request.getAttribute(ErrorHandler.ERROR_STATUS);
        int status = attribute instanceof Integer code ? code : response.getStatus();
        GatewayException error = error(status, request, cause);
        if (LOG.isDebugEnabled())
            LOG.debug("G2C error {} {} for {}", error.status(), error.getMessage(), request.getHttpURI().getPath(), cause);
        response.setStatus(error.status());
        if (HttpStatus.hasNoBody(error.status()) || "HEAD".equals(request.getMethod()))
        {
            callback.succeeded();
            return true;
        }
        byte[] body = render(endpoints.dialectAt(request.getHttpURI().getPath(), request.getHeaders()), error);
        response.getHeaders().put(HttpHeader.CONTENT_TYPE, "application/json");
        response.getHeaders().put(ErrorHandler.ERROR_CACHE_CONTROL);
        response.getHeaders().put(HttpHeader.CONTENT_LENGTH, body.length);
        response.write(true, ByteBuffer.wrap(body), callback);
        return true;
    }

    /** @return the body for {@code error} in {@code codec}'s dialect, or OpenAI-shaped when {@code codec} is null */
    static byte[] render(DialectCodec codec, GatewayException error)
    {
        if (codec != null)
        {
            try
            {
                return codec.encodeError(error);
            }
            catch (Throwable t)
            {
                LOG.error("the {} codec failed to render an error", codec.dialect(), t);
            }
        }
        return withoutDialect(error);
    }

    /** @return an OpenAI-shaped error body, for paths no dialect serves (OpenAI's shape is what most clients read) */
    static byte[] withoutDialect(GatewayException error)
    {
        String type = error.status() >= 500 ? "server_error" : "invalid_request_error";
        return ("{\"error\":{\"message\":" + JsonStrings.quote(error.getMessage()) + ",\"type\":\"" + type
            + "\",\"param\":null,\"code\":null}}").getBytes(StandardCharsets.UTF_8);
    }

    /** Maps what Jetty reports onto an exception with the gateway's message for the status. */
    private static GatewayException error(int status, Request request, Throwable cause)
    {
        if (cause instanceof GatewayException gateway)
            return gateway;
        if (cause instanceof HttpException http)
            status = http.getCode();
        else if (cause instanceof TimeoutException)
            status = HttpStatus.REQUEST_TIMEOUT_408;
        if (status < 400 || status > 599)
            status = HttpStatus.INTERNAL_SERVER_ERROR_500;
        String reason = cause instanceof HttpException http ? reason(http.getReason(), status) : null;
        int limit = request.getConnectionMetaData().getHttpConfiguration().getRequestHeaderSize();
        return switch (status)
        {
            case HttpStatus.BAD_REQUEST_400 -> invalid(status, "malformed HTTP request" + (reason == null ? "" : ": " + reason));
            case HttpStatus.REQUEST_TIMEOUT_408 -> invalid(status, "the request was not received in time");
            case HttpStatus.PAYLOAD_TOO_LARGE_413 -> new GatewayException(ErrorKind.REQUEST_TOO_LARGE, status,
                "request is too large" + (reason == null ? "" : ": " + reason), null, null, null);
            case HttpStatus.URI_TOO_LONG_414 -> invalid(status, "request URI is too long (expected: a request line and headers of"
                + " at most " + limit + " bytes)");
            case HttpStatus.REQUEST_HEADER_FIELDS_TOO_LARGE_431 -> invalid(status, "request headers are too large (expected: a"
                + " request line and headers of at most " + limit + " bytes)");
            case HttpStatus.UPGRADE_REQUIRED_426 -> invalid(status, "HTTP/2.0 in an HTTP/1 request line is not supported"
                + " (expected: HTTP/1.1, or HTTP/2 starting with the connection preface)");
            case HttpStatus.HTTP_VERSION_NOT_SUPPORTED_505 -> invalid(status, "HTTP version not supported"
                + (reason == null ? "" : ": " + reason) + " (expected: HTTP/1.1, HTTP/1.0, or HTTP/2 over h2c)");
            case HttpStatus.SERVICE_UNAVAILABLE_503 -> new GatewayException(ErrorKind.UNAVAILABLE, status,
                "the gateway is shutting down and takes no new requests (retry: another instance will answer)", null, null,
                null);
            default -> status < 500
                ? invalid(status, (reason == null ? HttpStatus.getMessage(status) : reason).toLowerCase(java.util.Locale.ROOT))
                : new GatewayException(ErrorKind.INTERNAL, status, "internal gateway error", null, null, null);
        };
    }

    private static GatewayException invalid(int status, String message)
    {
        return new GatewayException(ErrorKind.INVALID_REQUEST, status, message, null, null, null);
    }

    /**
     * @return Jetty's reason if it says more than the status's name: printable ASCII only, cut short, or {@code null}
     */
    private static String reason(String reason, int status)
    {
        if (reason == null || reason.isBlank() || reason.equalsIgnoreCase(HttpStatus.getMessage(status)))
            return null;
        StringBuilder b = new StringBuilder(Math.min(reason.length(), MAX_REASON));
        for (int i = 0; i < reason.length() && b.length() < MAX_REASON; i++)
        {
            char c = reason.charAt(i);
            b.append(c >= 0x20 && c < 0x7f ? c : '?');
        }
        return b.toString();
    }
}
