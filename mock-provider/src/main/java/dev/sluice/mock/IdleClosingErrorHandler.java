package dev.sluice.mock;

import java.util.concurrent.TimeoutException;

import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.handler.ErrorHandler;
import org.eclipse.jetty.util.Callback;

/**
 * Jetty's error pages, except for an idle timeout: a connection that expires while a request is arriving on it (the
 * request's first bytes raced the expiry, or its body stalled) is closed without an answer, as a provider's front end
 * closes an idle keep-alive connection. Jetty itself would answer such a request 500, which no provider does for a
 * connection it is closing, and which a client could not tell from a real server error.
 */
final class IdleClosingErrorHandler extends ErrorHandler
{
    @Override
    public boolean handle(Request request, Response response, Callback callback) throws Exception
    {
        if (request.getAttribute(ERROR_EXCEPTION) instanceof Throwable failure && isIdleTimeout(failure))
        {
            // Failing the error page's callback aborts the stream: the connection closes with nothing written.
            callback.failed(failure);
            return true;
        }
        return super.handle(request, response, callback);
    }

    private static boolean isIdleTimeout(Throwable failure)
    {
        for (Throwable cause = failure; cause != null; cause = cause.getCause())
        {
            if (cause instanceof TimeoutException)
                return true;
        }
        return false;
    }
}
