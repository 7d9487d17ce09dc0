package dev.sluice.bench.cell;

/**
 * The request bodies the cells send: an OpenAI Chat Completions request with a system prompt and a user message padded
 * with plain words to the wanted size. The same bytes go to every target of a cell.
 */
final class Bodies
{
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
        return Dialects.body(Dialects.OPENAI, model, stream, bytes);
    }
}
