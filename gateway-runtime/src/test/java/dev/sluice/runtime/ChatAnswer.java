package dev.sluice.runtime;

import dev.sluice.support.json.Json;
import com.fasterxml.jackson.databind.JsonNode;
import org.eclipse.jetty.client.HttpClient;
import org.eclipse.jetty.client.Request;
import org.eclipse.jetty.client.Result;
import org.eclipse.jetty.client.StringRequestContent;
import org.eclipse.jetty.http.HttpFields;
import org.eclipse.jetty.http.HttpMethod;
import org.eclipse.jetty.http.HttpVersion;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * What a client received for one chat request sent with jetty-client over HTTP/1.1: the status, the response headers,
 * every body byte as it came (also when the response ended abnormally) and that abnormal end, if any. Reads OpenAI
 * answers, streamed and not.
 *
 * @param status  the response status
 * @param headers the response headers
 * @param body    the body bytes received
 * @param failure why the response ended abnormally, or {@code null} for a clean end
 */
record ChatAnswer(int status, HttpFields headers, byte[] body, Throwable failure)
{
    static final String DONE = "[DONE]";

    /** @return an OpenAI chat request body for {@code model} with one user message */
    static String openAiBody(String model, boolean stream)
    {
        return "{\"model\":\"" + model + "\",\"stream\":" + stream + ",\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]}";
    }

    /** Sends an OpenAI chat request to {@code gateway} and waits for its whole answer. */
    static ChatAnswer openAi(GatewayHarness gateway, String model, boolean stream) throws Exception
    {
        return send(gateway.http, gateway.url("/v1/chat/completions"), openAiBody(model, stream)).get(30, TimeUnit.SECONDS);
    }

    /** Sends {@code json} to {@code url} and completes with what came back, however it ended. */
    static CompletableFuture<ChatAnswer> send(HttpClient http, String url, String json)
    {
        ByteArrayOutputStream seen = new ByteArrayOutputStream();
        CompletableFuture<ChatAnswer> answer = new CompletableFuture<>();
        Request request = http.newRequest(url).method(HttpMethod.POST).version(HttpVersion.HTTP_1_1)
            .timeout(25, TimeUnit.SECONDS).body(new StringRequestContent("application/json", json))
            .onResponseContent((response, buffer) ->
            {
                byte[] bytes = new byte[buffer.remaining()];
                buffer.get(bytes);
                synchronized (seen)
                {
                    seen.writeBytes(bytes);
                }
            });
        request.send((Result result) ->
        {
            byte[] bytes;
            synchronized (seen)
            {
                bytes = seen.toByteArray();
            }
            answer.complete(new ChatAnswer(result.getResponse().getStatus(), result.getResponse().getHeaders(), bytes,
                result.getFailure()));
        });
        return answer;
    }

    String text()
    {
        return new String(body, StandardCharsets.UTF_8);
    }

    /** @return the value of response header {@code name}, or {@code null} */
    String header(String name)
    {
        return headers.get(name);
    }

    /** @return {@code x-sluice-attempts}: how many attempts the router made */
    String attempts()
    {
        return header("x-sluice-attempts");
    }

    /** @return {@code x-sluice-target}: the target binding the answer came from */
    String target()
    {
        return header("x-sluice-target");
    }

    /** @return the id of the exchange, as the completion reports it */
    String requestId()
    {
        return header("x-request-id");
    }

    JsonNode json()
    {
        return parse(text());
    }

    private static JsonNode parse(String json)
    {
        try
        {
            return Json.MAPPER.readTree(json);
        }
        catch (IOException e)
        {
            throw new UncheckedIOException("not JSON: " + json, e);
        }
    }

    /** @return the {@code data:} payloads of a server-sent event stream, in order */
    List<String> data()
    {
        List<String> data = new ArrayList<>();
        for (String line : text().split("\n"))
        {
            if (line.startsWith("data: "))
                data.add(line.substring(6));
        }
        return data;
    }

    /** @return the text of an OpenAI answer: the message content, or the streamed content deltas joined */
    String openAiText()
    {
        if (!isStream())
            return json().path("choices").path(0).path("message").path("content").asText();
        StringBuilder text = new StringBuilder();
        for (String d : data())
        {
            if (d.equals(DONE))
                continue;
            JsonNode delta = parse(d).path("choices").path(0).path("delta").path("content");
            if (delta.isTextual())
                text.append(delta.asText());
        }
        return text.toString();
    }

    boolean isStream()
    {
        String type = header("content-type");
        return type != null && type.startsWith("text/event-stream");
    }

    /** @return whether the stream's last event is {@code data: [DONE]} */
    boolean endsWithDone()
    {
        List<String> data = data();
        return !data.isEmpty() && data.get(data.size() - 1).equals(DONE);
    }

    /** @return the last event of a stream when it is an OpenAI error event ({@code {"error":{…}}}), else {@code null} */
    JsonNode errorEvent()
    {
        List<String> data = data();
        if (data.isEmpty() || data.get(data.size() - 1).equals(DONE))
            return null;
        JsonNode last = parse(data.get(data.size() - 1));
        return last.has("error") ? last.get("error") : null;
    }

    @Override
    public String toString()
    {
        return status + " " + headers.asString().replace("\r\n", "; ") + " " + text()
            + (failure == null ? "" : " failure: " + failure);
    }
}
