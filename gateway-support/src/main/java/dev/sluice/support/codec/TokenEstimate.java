package dev.sluice.support.codec;

import dev.sluice.api.model.Tool;
import dev.sluice.api.model.Message;
import dev.sluice.api.model.ContentPart;
import dev.sluice.api.model.ChatRequest;
import dev.sluice.api.model.Embeddings;
import java.util.List;

/**
 * A tokenizer-free estimate of token counts, the same for every plugin that needs one before the provider says (body
 * limits, limit and budget reservations, the output of a stream the client cancelled). It assumes about four bytes
 * of text per token, which holds for English prose and JSON with the common BPE tokenizers and overestimates code
 * and other languages less than it underestimates them; each message and tool adds a small fixed overhead, and each
 * image a flat 765 tokens (OpenAI's high-detail cost of a 1024×1024 image). It is an estimate: a provider's usage,
 * once known, always replaces it.
 */
public final class TokenEstimate
{
    /** Bytes of text per token. */
    public static final int BYTES_PER_TOKEN = 4;
    /** Tokens charged per message for its role and framing. */
    public static final int PER_MESSAGE = 4;
    /** Tokens charged per image. */
    public static final int PER_IMAGE = 765;

    private TokenEstimate()
    {
    }

    /** @return the tokens of {@code bytes} bytes of UTF-8 text, rounded up */
    public static long ofBytes(long bytes)
    {
        return (Math.max(0, bytes) + BYTES_PER_TOKEN - 1) / BYTES_PER_TOKEN;
    }

    /** @return the tokens of {@code text}, counted in UTF-16 chars (close to UTF-8 bytes for ASCII), rounded up */
    public static long ofText(CharSequence text)
    {
        return text == null ? 0 : ofBytes(text.length());
    }

    /** @return the estimated input tokens of {@code request}: system, messages, tool definitions */
    public static long inputTokens(ChatRequest request)
    {
        long tokens = parts(request.system());
        for (Message m : request.messages())
            tokens += PER_MESSAGE + parts(m.content());
        for (Tool t : request.tools())
        {
            tokens += PER_MESSAGE + ofText(t.name()) + ofText(t.description())
                + (t.parameters() == null ? 0 : ofText(t.parameters().toString()));
        }
        return tokens;
    }

    /** @return the estimated input tokens of an embeddings request: its inputs' text, at least one token each */
    public static long inputTokens(Embeddings.Request request)
    {
        long tokens = 0;
        for (String input : request.inputs())
            tokens += Math.max(1, ofText(input));
        return tokens;
    }

    private static long parts(List<ContentPart> parts)
    {
        long tokens = 0;
        for (ContentPart p : parts)
        {
            if (p instanceof ContentPart.Text t)
                tokens += ofText(t.text());
            else if (p instanceof ContentPart.Image)
                tokens += PER_IMAGE;
            else if (p instanceof ContentPart.ToolCall c)
                tokens += ofText(c.name()) + ofText(c.arguments());
            else if (p instanceof ContentPart.ToolResult r)
                tokens += parts(r.content());
            else if (p instanceof ContentPart.Thinking th)
                tokens += ofText(th.text());
        }
        return tokens;
    }
}
