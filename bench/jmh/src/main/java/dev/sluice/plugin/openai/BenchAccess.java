package dev.sluice.plugin.openai;

import dev.sluice.api.binding.ClientBinding;
import dev.sluice.api.exchange.EventStream;
import dev.sluice.api.model.Usage;
import dev.sluice.api.upstream.BodySource;
import dev.sluice.api.upstream.Upstream;
import dev.sluice.support.upstream.UpstreamEventStream;

import java.util.function.Consumer;

/**
 * Opens the openai plugin's package-private stream relays to the JMH benchmarks, so they measure the code
 * {@link OpenAiClient} runs per chunk rather than a copy of it that could drift. It lives in the plugin's package
 * but in the bench module, which is never shipped; on the benchmark class path both jars are one class loader, so
 * the split package is harmless there (the gateway's plugin class loader never sees this class).
 *
 * <p>{@link #client} is the binding {@code OpenAiClientFactory} creates, over a given {@link Upstream}. Each stream is
 * what {@code OpenAiClient.onResponse} builds: the same-dialect raw relay, or the translated
 * one with a fresh {@link OpenAiStreamDecoder}. Not thread-safe, like the streams themselves.
 *
 * <pre>{@code
 * EventStream relay = BenchAccess.rawRelay(source, usage -> { });
 * StreamItem frame = relay.read();   // one RawFrame per upstream chunk
 * }</pre>
 */
public final class BenchAccess
{
    private BenchAccess()
    {
    }

    /**
     * @param body  the upstream body; chunks are released before {@code read} returns, unless lent
     * @param usage receives usage as soon as an event carries it
     * @return the same-dialect fast path, scanned for {@code [DONE]}, usage and error events: each chunk copied
     *         once into a {@code RawFrame}, or, once {@code acceptRetainedFrames()} was called, a chunk of whole
     *         events lent in a {@code RetainedFrame} (released by the caller)
     */
    public static EventStream rawRelay(BodySource body, Consumer<Usage> usage)
    {
        return new OpenAiRawStream(body, usage);
    }

    /**
     * @param body  the upstream body; chunks are released before {@code read} returns, unless lent
     * @param usage receives usage as soon as an event carries it
     * @return the same-dialect fast path of a stream whose {@code include_usage} the gateway added: as
     *         {@link #rawRelay}, but the usage-only chunk is recorded and dropped
     */
    public static EventStream hidingRelay(BodySource body, Consumer<Usage> usage)
    {
        return OpenAiRawStream.hidingUsage(body, usage);
    }

    /**
     * @param body a streamed request body, one JSON object
     * @return the body the client binding forwards: with {@code stream_options.include_usage} spliced in, or
     *         {@code null} if the client already asked
     */
    public static byte[] includeUsage(byte[] body)
    {
        return IncludeUsage.splice(body);
    }

    /**
     * @param body  the upstream body; chunks are released before {@code read} returns
     * @param usage receives usage as soon as an event carries it
     * @return the translated path: chunks decoded into canonical events by the OpenAI stream decoder
     */
    public static EventStream translatedRelay(BodySource body, Consumer<Usage> usage)
    {
        return new UpstreamEventStream.Translated(body, new OpenAiStreamDecoder(), usage);
    }

    /**
     * @param options  the binding's options, as the factory binds them
     * @param upstream the upstream it sends to
     * @return the {@code openai} client binding, as {@code OpenAiClientFactory} creates it
     */
    public static ClientBinding client(OpenAiClientOptions options, Upstream upstream)
    {
        return new OpenAiClient(options, upstream);
    }
}
