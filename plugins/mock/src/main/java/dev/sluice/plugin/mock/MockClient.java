package dev.sluice.plugin.mock;

import dev.sluice.api.GatewayException;
import dev.sluice.api.binding.ClientBinding;
import dev.sluice.api.exchange.Exchange;
import dev.sluice.api.exchange.Reply;
import dev.sluice.api.model.ChatRequest;
import dev.sluice.api.model.ChatResponse;
import dev.sluice.api.model.ContentPart;
import dev.sluice.api.model.Message;
import dev.sluice.api.model.Role;
import dev.sluice.api.model.StopReason;
import dev.sluice.api.model.Usage;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A provider inside the gateway. Each exchange is answered at once, in canonical form, so the server binding
 * encodes it in whatever dialect the client speaks:
 *
 * <ul>
 *   <li>not streamed: a {@link Reply.Message} with id {@code mock-N}, the exchange's
 *       {@linkplain Exchange#targetModel() target model}, one text part and {@link StopReason#END_TURN};</li>
 *   <li>streamed: a {@link Reply.Stream} of {@code MessageStart}, {@code TextStart(0)}, one {@code TextDelta} per
 *       word (with its leading whitespace, so the deltas concatenate to the exact text), {@code BlockStop(0)},
 *       {@code Stop}, a {@code UsageReport} when the request asked for usage, then {@code END}.</li>
 * </ul>
 *
 * <p>Usage is an estimate, not a tokenizer: output tokens are the answer's words, input tokens the runs of letters
 * and digits in the raw request body. It is also recorded on the exchange.
 *
 * <p>The request body is decoded only when the answer depends on it: with {@code echo: true}, and for streams (to
 * learn whether usage was asked for). Otherwise the mock costs no JSON parsing at all, which keeps it useful as a
 * zero-latency upstream when measuring the gateway itself.
 *
 * <p>Thread-safe: the only mutable state is the id counter.
 */
final class MockClient implements ClientBinding
{
    private static final String ECHO_PREFIX = "You said: ";
    private static final String ECHO_NOTHING = "You said nothing.";
    /** The raw stop value: the mock speaks no dialect, so it gives the most common one; encoders map END_TURN. */
    static final String RAW_STOP = "stop";

    private final MockOptions options;
    // The fixed answer is split once; echo answers are split per exchange.
    private final List<String> fixedChunks;
    private final AtomicLong ids = new AtomicLong();

    /**
     * @param options the bound options
     */
    MockClient(MockOptions options)
    {
        this.options = options;
        this.fixedChunks = options.echo() ? List.of() : words(options.text());
    }

    /** @return {@code "mock"}: it answers in the client's own dialect, with no upstream */
    @Override
    public String dialect()
    {
        return "mock";
    }

    @Override
    public CompletionStage<Reply> handle(Exchange exchange)
    {
        try
        {
            String text = options.echo() ? echo(exchange.request()) : options.text();
            List<String> chunks = options.echo() ? words(text) : fixedChunks;
            Usage usage = new Usage(inputTokens(exchange.body()), chunks.size(), 0, 0, 0);
            exchange.usage(usage);
            String id = "mock-" + ids.incrementAndGet();
            long created = System.currentTimeMillis() / 1000;
            if (exchange.stream())
            {
                boolean includeUsage = exchange.request().includeUsage();
                return CompletableFuture.completedFuture(new Reply.Stream(
                    new MockEventStream(id, exchange.targetModel(), created, chunks, usage, includeUsage)));
            }
            ChatResponse response = new ChatResponse(id, exchange.targetModel(), List.of(new ContentPart.Text(text)),
                StopReason.END_TURN, RAW_STOP, usage, created, null);
            return CompletableFuture.completedFuture(new Reply.Message(response));
        }
        catch (GatewayException e)
        {
            // A body that does not decode: the client gets the codec's INVALID_REQUEST, in its dialect.
            return CompletableFuture.failedFuture(e);
        }
    }

    /** @return {@code You said: } and the text parts of the last user message, joined by new lines */
    static String echo(ChatRequest request)
    {
        List<Message> messages = request.messages();
        for (int i = messages.size() - 1; i >= 0; i--)
        {
            Message message = messages.get(i);
            if (message.role() != Role.USER)
                continue;
            StringBuilder said = new StringBuilder();
            for (ContentPart part : message.content())
            {
                if (part instanceof ContentPart.Text t)
                {
                    if (said.length() > 0)
                        said.append('\n');
                    said.append(t.text());
                }
            }
            return said.length() == 0 ? ECHO_NOTHING : ECHO_PREFIX + said;
        }
        return ECHO_NOTHING;
    }

    /**
     * Splits {@code text} into word chunks, each word with the whitespace before it, so that the chunks
     * concatenate back to {@code text} exactly: {@code "Hi  there"} gives {@code "Hi"}, {@code "  there"}.
     *
     * @return the chunks, empty for an empty text
     */
    static List<String> words(String text)
    {
        List<String> chunks = new ArrayList<>();
        int start = 0;
        int i = 0;
        int n = text.length();
        while (i < n)
        {
            while (i < n && Character.isWhitespace(text.charAt(i)))
                i++;
            while (i < n && !Character.isWhitespace(text.charAt(i)))
                i++;
            chunks.add(text.substring(start, i));
            start = i;
        }
        return List.copyOf(chunks);
    }

    /** @return the runs of letters and digits in the raw body, at least 1: a rough token count without decoding */
    static long inputTokens(byte[] body)
    {
        long runs = 0;
        boolean inRun = false;
        for (byte b : body)
        {
            // Bytes of multi-byte UTF-8 sequences count as letters, so non-Latin text is not ignored.
            boolean word = b < 0 || (b >= '0' && b <= '9') || (b >= 'A' && b <= 'Z') || (b >= 'a' && b <= 'z');
            if (word && !inRun)
                runs++;
            inRun = word;
        }
        return Math.max(1, runs);
    }
}
