package dev.sluice.runtime;

import com.fasterxml.jackson.databind.JsonNode;
import com.openai.client.OpenAIClient;
import com.openai.core.http.StreamResponse;
import com.openai.models.chat.completions.ChatCompletionChunk;
import com.openai.models.chat.completions.ChatCompletionCreateParams;
import dev.sluice.support.json.Json;
import org.eclipse.jetty.client.ContentResponse;
import org.eclipse.jetty.client.Request;
import org.eclipse.jetty.client.StringRequestContent;
import org.eclipse.jetty.http.HttpMethod;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What the {@code limits} end-to-end tests send and read: chat requests carrying {@link TestIdentityFactory}'s key and
 * team headers, the admin snapshot's scopes ({@code GET /limits}), and waits for what a gateway reaches on its own.
 */
final class LimitsClient
{
    private LimitsClient()
    {
    }

    /** @return an OpenAI chat body for {@code model} with one user message */
    static String openAiBody(String model, boolean stream)
    {
        return "{\"model\":\"" + model + "\",\"stream\":" + stream + ",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}";
    }

    /** @return a POST of {@code body} to {@code path} on {@code gateway}, as key and team (either may be null) */
    static Request post(GatewayHarness gateway, String path, String body, String key, String team)
    {
        Request request = gateway.http.newRequest(gateway.url(path)).method(HttpMethod.POST)
            .timeout(60, TimeUnit.SECONDS).body(new StringRequestContent("application/json", body));
        if (key != null)
            request.headers(h -> h.put("x-test-key", key));
        if (team != null)
            request.headers(h -> h.put("x-test-team", team));
        return request;
    }

    /**
     * Sends {@code clients} streams at once, spread over {@code sdks} in turn, each for {@code model} with 20 max tokens
     * as key {@code keyPrefix + (i % 4)} of {@code team}; each client reads one event and hangs up.
     *
     * @return how many streams started, and the failures of the others
     */
    static CancelledStreams cancelMidway(List<OpenAIClient> sdks, int clients, String model, String keyPrefix, String team)
        throws Exception
    {
        ExecutorService pool = Executors.newFixedThreadPool(clients);
        AtomicInteger streamed = new AtomicInteger();
        ConcurrentLinkedQueue<Throwable> refusals = new ConcurrentLinkedQueue<>();
        try
        {
            List<Future<?>> runs = new ArrayList<>();
            for (int i = 0; i < clients; i++)
            {
                OpenAIClient sdk = sdks.get(i % sdks.size());
                ChatCompletionCreateParams ask = ChatCompletionCreateParams.builder().model(model)
                    .addUserMessage("Tell me a long story").maxCompletionTokens(20)
                    .putAdditionalHeader("x-test-key", keyPrefix + (i % 4)).putAdditionalHeader("x-test-team", team).build();
                runs.add(pool.submit(() ->
                {
                    try (StreamResponse<ChatCompletionChunk> stream = sdk.chat().completions().createStreaming(ask))
                    {
                        // Read one event, then hang up mid-stream.
                        stream.stream().iterator().next();
                        streamed.incrementAndGet();
                    }
                    catch (RuntimeException e)
                    {
                        refusals.add(e);
                    }
                }));
            }
            for (Future<?> run : runs)
                run.get(60, TimeUnit.SECONDS);
        }
        finally
        {
            pool.shutdownNow();
        }
        return new CancelledStreams(streamed.get(), List.copyOf(refusals));
    }

    /**
     * What {@link #cancelMidway} saw.
     *
     * @param streamed  streams that started (and were cancelled after their first event)
     * @param refusals  the failures of the others
     */
    record CancelledStreams(int streamed, List<Throwable> refusals)
    {
    }

    /** @return how many of {@code answers} came */
    static int done(List<CompletableFuture<ContentResponse>> answers)
    {
        int n = 0;
        for (CompletableFuture<ContentResponse> answer : answers)
        {
            if (answer.isDone())
                n++;
        }
        return n;
    }

    /** @return the answers that came */
    static List<ContentResponse> finished(List<CompletableFuture<ContentResponse>> answers)
    {
        List<ContentResponse> responses = new ArrayList<>();
        for (CompletableFuture<ContentResponse> answer : answers)
        {
            if (answer.isDone())
                responses.add(answer.join());
        }
        return responses;
    }

    /** @return {@code GET /limits} on {@code gateway}'s admin listener, which must answer 200 */
    static String admin(GatewayHarness gateway) throws Exception
    {
        ContentResponse response = gateway.http.GET(gateway.adminUrl("/limits"));
        assertThat(response.getStatus()).as(response.getContentAsString()).isEqualTo(200);
        return response.getContentAsString();
    }

    /** @return the snapshot of {@code scope} on {@code gateway} */
    static JsonNode scope(GatewayHarness gateway, String scope)
    {
        try
        {
            for (JsonNode s : json(admin(gateway)).get("scopes"))
            {
                if (s.get("scope").asText().equals(scope))
                    return s;
            }
        }
        catch (Exception e)
        {
            throw new AssertionError(e);
        }
        throw new AssertionError("no scope " + scope);
    }

    static JsonNode json(String text)
    {
        try
        {
            return Json.MAPPER.readTree(text);
        }
        catch (Exception e)
        {
            throw new AssertionError(text, e);
        }
    }

    /** Waits for {@code condition}, which the gateway reaches on its own (a completion hook, a provider's abort). */
    static void await(BooleanSupplier condition, String what) throws InterruptedException
    {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (!condition.getAsBoolean())
        {
            if (System.nanoTime() > deadline)
                throw new AssertionError("not reached within 60 s: " + what);
            Thread.sleep(20);
        }
    }
}
