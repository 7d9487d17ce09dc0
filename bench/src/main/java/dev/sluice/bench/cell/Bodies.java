package dev.sluice.bench.cell;

import java.nio.charset.StandardCharsets;

/**
 * The request bodies the cells send: an OpenAI Chat Completions request with a system prompt and a user message padded
 * with plain words to the wanted size. The same bytes go to every target of a cell.
 */
final class Bodies
{
    private static final String WORDS = "the quick brown fox jumps over the lazy dog while a gateway relays bytes ";

    private Bodies()
    {
    }

    /**
     * @param model the model to name
     * @param stream whether to ask for an SSE stream (with the usage chunk, as SDKs usually do)
     * @param bytes the approximate body size; the result is at least the size of the fixed parts
     * @return the UTF-8 JSON body
     */
    static byte[] chat(String model, boolean stream, int bytes)
    {
        String streaming = stream ? "\"stream\":true,\"stream_options\":{\"include_usage\":true}," : "";
        String head = "{\"model\":\"" + model + "\"," + streaming +
            "\"max_tokens\":64,\"temperature\":0.2,\"messages\":[{\"role\":\"system\",\"content\":\"You are a concise " +
            "assistant. Answer in one sentence.\"},{\"role\":\"user\",\"content\":\"Summarise this text: ";
        String tail = "\"}]}";
        StringBuilder body = new StringBuilder(Math.max(bytes, 256)).append(head);
        int padding = bytes - head.length() - tail.length();
        for (int i = 0; i < padding; i++)
        {
            body.append(WORDS.charAt(i % WORDS.length()));
        }
        return body.append(tail).toString().getBytes(StandardCharsets.UTF_8);
    }
}
