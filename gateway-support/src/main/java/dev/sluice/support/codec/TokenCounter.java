package dev.sluice.support.codec;

import com.knuddels.jtokkit.Encodings;
import com.knuddels.jtokkit.api.Encoding;
import com.knuddels.jtokkit.api.EncodingType;
import dev.sluice.api.model.ChatRequest;
import dev.sluice.api.model.ContentPart;
import dev.sluice.api.model.Message;
import dev.sluice.api.model.Tool;

import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Counts a canonical request's input tokens with a real BPE tokenizer (jtokkit's tiktoken vocabularies): what the
 * gateway answers a token count with when the provider has no counting endpoint. Where {@link TokenEstimate} guesses
 * four bytes a token, this one tokenizes.
 *
 * <p><b>Vocabulary.</b> {@link Vocabulary#O200K_BASE}, the tokenizer of OpenAI's current models (gpt-4o, gpt-4.1,
 * gpt-5, the o-series), for every model but those known to use {@link Vocabulary#CL100K_BASE}: {@code gpt-4} and its
 * dated and {@code -turbo} versions, {@code gpt-3.5-turbo} and the {@code text-embedding-} models
 * ({@link Vocabulary#of(String)}). Other providers' models (Claude, Gemini, Llama…) have tokenizers of their own, which
 * no one publishes in full; for them the count is an estimate within tens of percent, and better than bytes over four.
 *
 * <p><b>What is counted</b>, following OpenAI's published way of counting a chat request (its cookbook's
 * {@code num_tokens_from_messages}):
 * <ul>
 *   <li>each message and a non-empty system prompt: {@value #PER_MESSAGE} tokens of framing and role, its text, and
 *       for a message with a name {@value #PER_NAME} more and the name's tokens;</li>
 *   <li>{@value #REPLY_PRIMING} tokens once, for the assistant turn the answer starts;</li>
 *   <li>each tool definition: {@value #PER_TOOL} tokens of framing, its name, description and JSON schema (compact
 *       JSON); providers render schemas in their own ways, so this part is the least exact;</li>
 *   <li>a tool call: its name and its arguments' JSON text; a tool result: its content; a response format: its JSON
 *       schema;</li>
 *   <li>an image: a fixed {@value #PER_IMAGE} tokens (OpenAI's cost of a 1024×1024 image at high detail), or
 *       {@value #PER_LOW_DETAIL_IMAGE} at {@code detail: low}; the gateway does not fetch or measure images;</li>
 *   <li>reasoning sent back ({@link ContentPart.Thinking}): nothing, as providers drop earlier turns' reasoning from
 *       the input.</li>
 * </ul>
 * Text is tokenized as ordinary text: a special token's spelling in a prompt ({@code <|endoftext|>}) is counted as
 * the characters it is, never refused.
 *
 * <p><b>Loading.</b> A vocabulary is loaded once per process, the first time it is asked for, and shared: an
 * instance is immutable and thread-safe. Loading reads a few megabytes from jtokkit's jar and takes a fraction of a
 * second, so a request path never waits for it: {@link #load(Vocabulary)} loads on a thread of its own (started once,
 * ended with the load) and {@link #loaded(Vocabulary)} answers without waiting. {@link #of(Vocabulary)} waits, for
 * startup code and tests.
 *
 * <pre>{@code
 * TokenCounter counter = TokenCounter.loaded(TokenCounter.Vocabulary.of(model));
 * long tokens = counter != null ? counter.inputTokens(request) : TokenEstimate.inputTokens(request);
 * TokenCounter.load(TokenCounter.Vocabulary.of(model)).thenApply(c -> c.inputTokens(request));   // never blocks
 * }</pre>
 */
public final class TokenCounter
{
    /** Tokens of each message's framing and role. */
    public static final int PER_MESSAGE = 4;
    /** Tokens a message's name adds beside its own. */
    public static final int PER_NAME = 1;
    /** Tokens of the assistant turn an answer starts, once per request. */
    public static final int REPLY_PRIMING = 3;
    /** Tokens of each tool definition's framing. */
    public static final int PER_TOOL = 8;
    /** Tokens of an image. */
    public static final int PER_IMAGE = 765;
    /** Tokens of an image at {@code detail: low}. */
    public static final int PER_LOW_DETAIL_IMAGE = 85;

    /** A tokenizer's vocabulary. */
    public enum Vocabulary
    {
        /** The vocabulary of gpt-4o and later OpenAI models, and the default. */
        O200K_BASE(EncodingType.O200K_BASE),
        /** The vocabulary of gpt-4, gpt-3.5-turbo and OpenAI's text-embedding models. */
        CL100K_BASE(EncodingType.CL100K_BASE);

        private final EncodingType type;
        private final AtomicReference<CompletableFuture<TokenCounter>> loading = new AtomicReference<>();

        Vocabulary(EncodingType type)
        {
            this.type = type;
        }

        /** @return the vocabulary's tiktoken name, {@code o200k_base} or {@code cl100k_base} */
        public String tiktokenName()
        {
            return type.getName();
        }

        /**
         * @return the vocabulary of {@code model}: {@link #CL100K_BASE} for {@code gpt-4} (but not {@code gpt-4o},
         *         {@code gpt-4.1}, {@code gpt-4.5}), {@code gpt-3.5…} (Azure's {@code gpt-35…}) and
         *         {@code text-embedding-…}, after any
         *         {@code provider/} prefix and case-insensitively; {@link #O200K_BASE} for every other model
         */
        public static Vocabulary of(String model)
        {
            if (model == null)
                return O200K_BASE;
            String name = model.substring(model.lastIndexOf('/') + 1).toLowerCase(Locale.ROOT);
            if (name.startsWith("gpt-3.5") || name.startsWith("gpt-35") || name.startsWith("text-embedding-"))
                return CL100K_BASE;
            if (name.equals("gpt-4") || name.startsWith("gpt-4-"))
                return CL100K_BASE;
            return O200K_BASE;
        }
    }

    private final Vocabulary vocabulary;
    private final Encoding encoding;

    private TokenCounter(Vocabulary vocabulary, Encoding encoding)
    {
        this.vocabulary = vocabulary;
        this.encoding = encoding;
    }

    /**
     * Starts loading {@code vocabulary} on a thread of its own unless it is loaded or loading; never blocks.
     *
     * @return the counter once loaded: completed already if it was, else completed on the loading thread (so what is
     *         chained on it runs there); failed if the vocabulary could not be read, and the next call tries again
     */
    public static CompletionStage<TokenCounter> load(Vocabulary vocabulary)
    {
        CompletableFuture<TokenCounter> current = vocabulary.loading.get();
        if (current != null)
            return current;
        CompletableFuture<TokenCounter> mine = new CompletableFuture<>();
        current = vocabulary.loading.compareAndExchange(null, mine);
        if (current != null)
            return current;
        Thread loader = new Thread(() -> complete(vocabulary, mine), "sluice-tokenizer-" + vocabulary.tiktokenName());
        loader.setDaemon(true);
        loader.start();
        return mine;
    }

    /** @return the counter of {@code vocabulary} if it is loaded, else {@code null}; never blocks */
    public static TokenCounter loaded(Vocabulary vocabulary)
    {
        CompletableFuture<TokenCounter> current = vocabulary.loading.get();
        if (current == null || !current.isDone() || current.isCompletedExceptionally())
            return null;
        return current.join();
    }

    /**
     * @return the counter of {@code vocabulary}, loading it on the calling thread if no one started to, else waiting
     *         for the load under way: for startup code and tests, never a request path
     * @throws IllegalStateException if the vocabulary cannot be read
     */
    public static TokenCounter of(Vocabulary vocabulary)
    {
        CompletableFuture<TokenCounter> mine = new CompletableFuture<>();
        CompletableFuture<TokenCounter> current = vocabulary.loading.compareAndExchange(null, mine);
        if (current == null)
        {
            complete(vocabulary, mine);
            current = mine;
        }
        try
        {
            return current.join();
        }
        catch (CompletionException e)
        {
            throw new IllegalStateException("the " + vocabulary.tiktokenName() + " tokenizer could not be loaded",
                e.getCause());
        }
    }

    private static void complete(Vocabulary vocabulary, CompletableFuture<TokenCounter> future)
    {
        try
        {
            Encoding encoding = Encodings.newLazyEncodingRegistry().getEncoding(vocabulary.type);
            future.complete(new TokenCounter(vocabulary, encoding));
        }
        catch (RuntimeException | Error e)
        {
            // Forget the failed load, so that a later call tries again rather than failing forever.
            vocabulary.loading.compareAndSet(future, null);
            future.completeExceptionally(e);
        }
    }

    /** @return the vocabulary this counter tokenizes with */
    public Vocabulary vocabulary()
    {
        return vocabulary;
    }

    /** @return the tokens of {@code text}, special tokens' spellings counted as ordinary text; 0 for {@code null} */
    public int count(String text)
    {
        return text == null || text.isEmpty() ? 0 : encoding.countTokensOrdinary(text);
    }

    /** @return the input tokens of {@code request}, counted as the class comment says */
    public long inputTokens(ChatRequest request)
    {
        long tokens = REPLY_PRIMING;
        if (!request.system().isEmpty())
            tokens += PER_MESSAGE + parts(request.system());
        for (Message m : request.messages())
        {
            tokens += PER_MESSAGE + parts(m.content());
            if (m.name() != null)
                tokens += PER_NAME + count(m.name());
        }
        for (Tool t : request.tools())
        {
            tokens += PER_TOOL + count(t.name()) + count(t.description())
                + (t.parameters() == null ? 0 : count(t.parameters().toString()));
        }
        ChatRequest.ResponseFormat format = request.responseFormat();
        if (format != null && format.schema() != null)
            tokens += count(format.schema().toString());
        return tokens;
    }

    private long parts(List<ContentPart> parts)
    {
        long tokens = 0;
        for (ContentPart p : parts)
        {
            if (p instanceof ContentPart.Text t)
                tokens += count(t.text());
            else if (p instanceof ContentPart.Image i)
                tokens += "low".equals(i.detail()) ? PER_LOW_DETAIL_IMAGE : PER_IMAGE;
            else if (p instanceof ContentPart.ToolCall c)
                tokens += count(c.name()) + count(c.arguments());
            else if (p instanceof ContentPart.ToolResult r)
                tokens += parts(r.content());
        }
        return tokens;
    }
}
