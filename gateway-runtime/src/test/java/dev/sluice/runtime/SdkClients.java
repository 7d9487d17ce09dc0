package dev.sluice.runtime;

import com.anthropic.client.AnthropicClient;
import com.anthropic.client.okhttp.AnthropicOkHttpClient;
import com.google.genai.Client;
import com.google.genai.types.HttpOptions;
import com.google.genai.types.HttpRetryOptions;
import com.openai.client.OpenAIClient;
import com.openai.client.okhttp.OpenAIOkHttpClient;
import com.openai.models.responses.Response;
import com.openai.models.responses.ResponseOutputItem;
import dev.sluice.runtime.internal.http.OnceCallback;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The official SDK clients the runtime tests talk to a gateway with, configured alike (no retries: a test sees
 * every failure; 20 s timeout), and the shared end of such a test class.
 */
final class SdkClients
{
    static final Duration TIMEOUT = Duration.ofSeconds(20);

    private SdkClients()
    {
    }

    /** @param root the gateway's root URL (no path) */
    static OpenAIClient openai(String root, String key)
    {
        return OpenAIOkHttpClient.builder().baseUrl(root + "/v1").apiKey(key).maxRetries(0).timeout(TIMEOUT).build();
    }

    /** @param root the gateway's root URL (no path) */
    static AnthropicClient anthropic(String root, String key)
    {
        return AnthropicOkHttpClient.builder().baseUrl(root).apiKey(key).maxRetries(0).timeout(TIMEOUT).build();
    }

    /** @param root the gateway's root URL (no path) */
    static Client genai(String root, String key)
    {
        return Client.builder().apiKey(key).httpOptions(HttpOptions.builder().baseUrl(root).apiVersion("v1beta")
            .timeout((int)TIMEOUT.toMillis()).retryOptions(HttpRetryOptions.builder().attempts(1).build()).build())
            .build();
    }

    /**
     * Closes what a test class started — the SDK clients and the gateway, in order, then always the mock — and checks
     * that no handler callback was completed twice meanwhile.
     *
     * @param mock    the provider mock, or null
     * @param started SDK clients ({@link OpenAIClient}, {@link AnthropicClient}) and {@link AutoCloseable}s; nulls
     *                (never started) are skipped
     */
    /** @return the output text of a Responses API answer: its messages' text parts, in order */
    static String responseText(Response response)
    {
        StringBuilder text = new StringBuilder();
        for (ResponseOutputItem item : response.output())
        {
            if (item.isMessage())
                item.asMessage().content().forEach(c -> c.outputText().ifPresent(t -> text.append(t.text())));
        }
        return text.toString();
    }

    static void stop(AutoCloseable mock, Object... started) throws Exception
    {
        try
        {
            for (Object o : started)
            {
                if (o instanceof OpenAIClient c)
                    c.close();
                else if (o instanceof AnthropicClient c)
                    c.close();
                else if (o instanceof AutoCloseable c)
                    c.close();
                else if (o != null)
                    throw new IllegalArgumentException("cannot close " + o.getClass());
            }
        }
        finally
        {
            if (mock != null)
                mock.close();
        }
        assertThat(OnceCallback.doubleCompletions()).as("handler callbacks completed twice").isZero();
    }
}
