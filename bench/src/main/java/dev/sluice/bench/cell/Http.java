package dev.sluice.bench.cell;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.function.BooleanSupplier;

/**
 * The harness' own small HTTP calls (readiness, mock stats, stage tables): blocking, short timeouts, never on a
 * measured path.
 */
final class Http
{
    private static final HttpClient CLIENT = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
        .connectTimeout(Duration.ofSeconds(2)).build();

    private Http()
    {
    }

    /**
     * @param uri what to get
     * @return the response (status and body)
     * @throws IOException if the request fails
     */
    static HttpResponse<String> get(URI uri) throws IOException
    {
        try
        {
            return CLIENT.send(HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(5)).GET().build(),
                HttpResponse.BodyHandlers.ofString());
        }
        catch (InterruptedException x)
        {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted", x);
        }
    }

    /**
     * Polls {@code uri} every 10 ms until it answers 200 (fine enough to time a process' first answer).
     *
     * @param uri the readiness URL
     * @param timeout how long to wait at most
     * @param alive false when the process behind it died (waiting on is pointless)
     * @return whether it answered 200 in time
     */
    static boolean awaitOk(URI uri, Duration timeout, BooleanSupplier alive)
    {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (System.nanoTime() < deadline && alive.getAsBoolean())
        {
            try
            {
                if (get(uri).statusCode() == 200)
                    return true;
            }
            catch (IOException x)
            {
                // Not listening yet.
            }
            try
            {
                Thread.sleep(10);
            }
            catch (InterruptedException x)
            {
                Thread.currentThread().interrupt();
                return false;
            }
        }
        return false;
    }
}
