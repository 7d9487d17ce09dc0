package dev.sluice.runtime;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.eclipse.jetty.client.ContentResponse;
import org.eclipse.jetty.client.HttpClient;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

/**
 * The exchange-tap example plugin (plugin-examples/exchange-tap) as a third party installs it: a plugins folder with
 * the distribution's jars and {@code exchange-tap.jar}, and a reader of what the tap serves on the admin listener.
 */
final class TapGateway
{
    private static final ObjectMapper JSON = new ObjectMapper();

    private TapGateway()
    {
    }

    /** @return a new plugins folder under {@code dir} with the distribution's plugins and the exchange-tap jar */
    static Path plugins(Path dir) throws Exception
    {
        return TestDist.pluginsWithExample(dir, "exchange-tap.jar");
    }

    /** @return the tap's JSON at {@code url} (its admin path), asserting a 200 */
    static JsonNode read(HttpClient http, String url) throws Exception
    {
        ContentResponse r = http.newRequest(url).timeout(10, TimeUnit.SECONDS).send();
        if (r.getStatus() != 200)
            throw new AssertionError("GET " + url + ": " + r.getStatus() + " " + r.getContentAsString());
        return JSON.readTree(r.getContentAsString());
    }

    /**
     * Reads the tap until {@code until} holds (completions are reported after the last byte was handed to the
     * connection, so a client may hold its answer a moment before the listener ran): waits for an event, never asserts
     * a duration.
     */
    static JsonNode await(HttpClient http, String url, Predicate<JsonNode> until) throws Exception
    {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        JsonNode tap = read(http, url);
        while (!until.test(tap))
        {
            if (System.nanoTime() > deadline)
                throw new AssertionError("the tap never got there: " + tap.toPrettyString());
            Thread.sleep(10);
            tap = read(http, url);
        }
        return tap;
    }

    /** @return the tap once it has seen {@code n} completions */
    static JsonNode awaitSeen(HttpClient http, String url, long n) throws Exception
    {
        return await(http, url, tap -> tap.get("seen").asLong() >= n);
    }

    /** @return the records, oldest first */
    static List<JsonNode> records(JsonNode tap)
    {
        List<JsonNode> out = new ArrayList<>();
        tap.get("recent").forEach(out::add);
        java.util.Collections.reverse(out);
        return out;
    }

    /** @return the one record with request id {@code id} */
    static JsonNode record(JsonNode tap, String id)
    {
        List<JsonNode> found = records(tap).stream().filter(r -> id.equals(r.get("id").asText())).toList();
        if (found.size() != 1)
            throw new AssertionError(found.size() + " records of " + id + " in " + tap.toPrettyString());
        return found.get(0);
    }
}
