package dev.sluice.bench.cell;

import java.nio.charset.StandardCharsets;

/**
 * The dialects a cell can speak: each one's chat path and a request body of about the wanted size. The gateway's
 * server binding speaks the cell's client dialect, its client binding the provider dialect; the direct run sends the
 * provider dialect's body straight to the mock.
 */
final class Dialects
{
    static final String OPENAI = "openai";
    static final String ANTHROPIC = "anthropic";
    static final String RESPONSES = "openai-responses";
    /** OpenAI's embeddings: the {@code openai} binding type's other endpoint, a load of its own. */
    static final String EMBEDDINGS = "openai-embeddings";
    /**
     * {@link #EMBEDDINGS} asking for 1,536 dimensions, the size of OpenAI's {@code text-embedding-3-small} and
     * {@code text-embedding-ada-002} answers (the mock answers 8 unless asked).
     */
    static final String EMBEDDINGS_1536 = "openai-embeddings-1536";

    private static final String WORDS = "the quick brown fox jumps over the lazy dog while a gateway relays bytes ";

    private Dialects()
    {
    }

    /** @return the path a server of {@code dialect} answers chats on, below the host */
    static String path(String dialect)
    {
        return switch (dialect)
        {
            case OPENAI -> "/v1/chat/completions";
            case ANTHROPIC -> "/v1/messages";
            case RESPONSES -> "/v1/responses";
            case EMBEDDINGS, EMBEDDINGS_1536 -> "/v1/embeddings";
            default -> throw new IllegalArgumentException("dialect: " + dialect
                + " (expected: openai, anthropic or openai-responses)");
        };
    }

    /**
     * @param dialect the body's dialect
     * @param model   the model to name
     * @param stream  whether to ask for a stream (OpenAI: with the usage chunk, as SDKs usually do)
     * @param bytes   the approximate body size; at least the size of the fixed parts
     * @return the UTF-8 JSON body: a system prompt and a user message padded with plain words
     */
    static byte[] body(String dialect, String model, boolean stream, int bytes)
    {
        String head;
        String tail;
        switch (dialect)
        {
            case OPENAI ->
            {
                String streaming = stream ? "\"stream\":true,\"stream_options\":{\"include_usage\":true}," : "";
                head = "{\"model\":\"" + model + "\"," + streaming +
                    "\"max_tokens\":64,\"temperature\":0.2,\"messages\":[{\"role\":\"system\",\"content\":\"You are a " +
                    "concise assistant. Answer in one sentence.\"},{\"role\":\"user\",\"content\":\"Summarise this text: ";
                tail = "\"}]}";
            }
            case ANTHROPIC ->
            {
                head = "{\"model\":\"" + model + "\"," + (stream ? "\"stream\":true," : "") +
                    "\"max_tokens\":64,\"temperature\":0.2,\"system\":\"You are a concise assistant. Answer in one " +
                    "sentence.\",\"messages\":[{\"role\":\"user\",\"content\":\"Summarise this text: ";
                tail = "\"}]}";
            }
            case RESPONSES ->
            {
                head = "{\"model\":\"" + model + "\"," + (stream ? "\"stream\":true," : "") +
                    "\"max_output_tokens\":64,\"temperature\":0.2,\"instructions\":\"You are a concise assistant. Answer " +
                    "in one sentence.\",\"input\":\"Summarise this text: ";
                tail = "\"}";
            }
            case EMBEDDINGS ->
            {
                head = "{\"model\":\"" + model + "\",\"input\":\"Summarise this text: ";
                tail = "\"}";
            }
            case EMBEDDINGS_1536 ->
            {
                head = "{\"model\":\"" + model + "\",\"dimensions\":1536,\"input\":\"Summarise this text: ";
                tail = "\"}";
            }
            default -> throw new IllegalArgumentException("dialect: " + dialect
                + " (expected: openai, anthropic or openai-responses)");
        }
        StringBuilder body = new StringBuilder(Math.max(bytes, 256)).append(head);
        int padding = bytes - head.length() - tail.length();
        for (int i = 0; i < padding; i++)
        {
            body.append(WORDS.charAt(i % WORDS.length()));
        }
        return body.append(tail).toString().getBytes(StandardCharsets.UTF_8);
    }

    /** @return the binding type that serves or calls {@code dialect}'s load */
    static String bindingType(String dialect)
    {
        return embeddings(dialect) ? OPENAI : dialect;
    }

    /** @return whether {@code dialect} is one of the embeddings loads */
    static boolean embeddings(String dialect)
    {
        return EMBEDDINGS.equals(dialect) || EMBEDDINGS_1536.equals(dialect);
    }
}
