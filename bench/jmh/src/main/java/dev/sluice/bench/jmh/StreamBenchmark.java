package dev.sluice.bench.jmh;

import java.util.List;
import dev.sluice.api.model.ChatRequest;
import dev.sluice.api.codec.StreamEncoder;
import dev.sluice.api.exchange.EventStream;
import dev.sluice.api.model.RawFrame;
import dev.sluice.api.model.RetainedFrame;
import dev.sluice.api.model.StreamEvent;
import dev.sluice.api.model.StreamItem;
import dev.sluice.api.model.Usage;
import dev.sluice.plugin.openai.BenchAccess;
import dev.sluice.plugin.openai.OpenAiCodec;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.Blackhole;

import java.nio.ByteBuffer;
import java.util.concurrent.TimeUnit;

/**
 * One upstream SSE chunk holding one {@code chat.completion.chunk} event, taken through the plugin's own relay
 * classes exactly as {@code OpenAiClient} builds them, and drained the way the runtime's stream pump does
 * ({@code read()} until {@code null}):
 * <ul>
 *   <li>{@code relayRaw}: the same-dialect fast path for a consumer that does not take retained frames; one copy of
 *       the chunk into a {@code RawFrame} and an SSE scan for {@code [DONE]}, usage and errors.</li>
 *   <li>{@code relayRawLent}: the same, for a consumer that called {@code acceptRetainedFrames()} (the runtime's
 *       stream pump): the chunk's own buffer goes out in a {@code RetainedFrame}, released after the "write".</li>
 *   <li>{@code relayRawLentStripped}: the lent relay, plus what removing the {@code "usage":null} OpenAI adds to every
 *       chunk once asked for usage would cost (the decision in {@code OpenAiRawStream}): the field found and the
 *       chunk copied without it into a new frame, since a changed chunk cannot be lent.</li>
 *   <li>{@code relayHidingLent}: the lent relay of a stream whose {@code include_usage} the gateway added; on the
 *       {@code usage} chunk the event is recorded and dropped.</li>
 *   <li>{@code relayTranslated}: the chunk decoded into canonical events by the OpenAI stream decoder, and each
 *       event encoded again by the OpenAI stream encoder (the cost shape of a cross-dialect stream).</li>
 * </ul>
 * The stream is mid-flight: setup relays the chunk once, so the decoder has already opened its message and block
 * and each measured call is one steady-state event. {@code chunk} picks the event: {@code text} is a content delta,
 * {@code text-include-usage} the same delta with the {@code "usage":null} OpenAI adds to every chunk when the
 * client asked for {@code stream_options.include_usage}, {@code usage} the final usage-only chunk.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class StreamBenchmark
{
    /** Which streamed event. */
    @Param({"text", "text-include-usage", "usage"})
    public String chunk;

    private ChunkSource rawSource;
    private EventStream raw;
    private ChunkSource lentSource;
    private EventStream lent;
    private ChunkSource hidingSource;
    private EventStream hiding;
    private ChunkSource translatedSource;
    private EventStream translated;
    private StreamEncoder encoder;
    private long usageReports;

    /** Builds both relays over a reusable chunk and takes each through its first chunk. */
    @Setup
    public void setUp()
    {
        byte[] bytes = Fixtures.bytes("chunk-" + chunk + ".sse");
        rawSource = new ChunkSource(bytes);
        raw = BenchAccess.rawRelay(rawSource, this::onUsage);
        lentSource = new ChunkSource(bytes);
        lent = BenchAccess.rawRelay(lentSource, this::onUsage);
        Fixtures.check(lent.acceptRetainedFrames(), "the raw relay takes the offer of retained frames");
        hidingSource = new ChunkSource(bytes);
        hiding = BenchAccess.hidingRelay(hidingSource, this::onUsage);
        hiding.acceptRetainedFrames();
        translatedSource = new ChunkSource(bytes);
        translated = BenchAccess.translatedRelay(translatedSource, this::onUsage);
        // A streamed request that asked for usage, as the translated path sees it.
        ChatRequest request = new ChatRequest("gpt-4o", List.of(), List.of(), List.of(), null, null, null, null, true, true,
            null, null, null);
        encoder = OpenAiCodec.INSTANCE.newStreamEncoder(() -> request);

        rawSource.arm();
        StreamItem item = raw.read();
        Fixtures.check(item instanceof RawFrame frame && frame.atBoundary() && frame.bytes().remaining() == bytes.length,
            "the raw relay emits the chunk as one frame at an event boundary, got " + item);
        Fixtures.check(raw.read() == null, "one frame per chunk");

        lentSource.arm();
        item = lent.read();
        Fixtures.check(item instanceof RetainedFrame frame && frame.bytes() == lentSource.buffer() && frame.atBoundary(),
            "the lending relay hands on the chunk's own buffer, got " + item);
        Fixtures.check(lentSource.released() == lentSource.handedOut() - 1, "a lent chunk is held until its release");
        ((RetainedFrame)item).release();
        Fixtures.check(lent.read() == null, "one frame per chunk");

        hidingSource.arm();
        item = hiding.read();
        if ("usage".equals(chunk))
            Fixtures.check(item == null, "the hiding relay drops the usage chunk, got " + item);
        else
        {
            Fixtures.check(item instanceof RetainedFrame frame && frame.bytes() == hidingSource.buffer(),
                "the hiding relay lends every other chunk, got " + item);
            ((RetainedFrame)item).release();
            Fixtures.check(hiding.read() == null, "one frame per chunk");
        }

        translatedSource.arm();
        int events = 0;
        boolean sawPayload = false;
        while ((item = translated.read()) != null)
        {
            Fixtures.check(item instanceof StreamEvent && !(item instanceof StreamEvent.Error), "no error, got " + item);
            sawPayload |= item instanceof StreamEvent.TextDelta || item instanceof StreamEvent.UsageReport;
            encoder.encode((StreamEvent)item);
            events++;
        }
        Fixtures.check(events > 0 && sawPayload, "the translated relay decodes the chunk");
        long before = usageReports;
        translatedSource.arm();
        Fixtures.check(translated.read() != null && translated.read() == null, "one event per steady-state chunk");
        Fixtures.check((usageReports > before) == "usage".equals(chunk), "usage is reported only for the usage chunk");
    }

    /** Checks no chunk was leaked: the relays release each chunk they read before {@code read} returns, or lend it. */
    @TearDown
    public void tearDown()
    {
        Fixtures.check(rawSource.released() == rawSource.handedOut(), "the raw relay released every chunk");
        Fixtures.check(lentSource.released() == lentSource.handedOut(), "every lent chunk was released once");
        Fixtures.check(hidingSource.released() == hidingSource.handedOut(), "the hiding relay released every chunk");
        Fixtures.check(translatedSource.released() == translatedSource.handedOut(), "the translated relay released every chunk");
    }

    private void onUsage(Usage usage)
    {
        usageReports++;
    }

    /** The same-dialect relay of one chunk: what the runtime writes is the frame's buffer. */
    @Benchmark
    public void relayRaw(Blackhole bh)
    {
        rawSource.arm();
        StreamItem item;
        while ((item = raw.read()) != null)
            bh.consume(((RawFrame)item).bytes());
    }

    /** The same-dialect relay of one chunk to a consumer that takes retained frames: written, then released. */
    @Benchmark
    public void relayRawLent(Blackhole bh)
    {
        lentSource.arm();
        StreamItem item;
        while ((item = lent.read()) != null)
        {
            RetainedFrame frame = (RetainedFrame)item;
            bh.consume(frame.bytes());
            frame.release();
        }
    }

    /**
     * The lent relay, then what stripping {@code ,"usage":null} would add: find it, copy the chunk without it into a
     * new frame (a changed chunk cannot be lent), and release the chunk at once.
     */
    @Benchmark
    public void relayRawLentStripped(Blackhole bh)
    {
        lentSource.arm();
        StreamItem item;
        while ((item = lent.read()) != null)
        {
            RetainedFrame frame = (RetainedFrame)item;
            ByteBuffer bytes = frame.bytes();
            int at = indexOf(bytes, USAGE_NULL);
            if (at < 0)
            {
                bh.consume(bytes);
            }
            else
            {
                int from = bytes.position();
                byte[] copy = new byte[bytes.remaining() - USAGE_NULL.length];
                bytes.get(from, copy, 0, at - from);
                bytes.get(at + USAGE_NULL.length, copy, at - from, bytes.limit() - at - USAGE_NULL.length);
                bh.consume(new RawFrame(ByteBuffer.wrap(copy), true));
            }
            frame.release();
        }
    }

    /** The lent relay of a stream whose usage the gateway asked for: the usage chunk is recorded and dropped. */
    @Benchmark
    public void relayHidingLent(Blackhole bh)
    {
        hidingSource.arm();
        StreamItem item;
        while ((item = hiding.read()) != null)
        {
            RetainedFrame frame = (RetainedFrame)item;
            bh.consume(frame.bytes());
            frame.release();
        }
    }

    private static final byte[] USAGE_NULL = ",\"usage\":null".getBytes(java.nio.charset.StandardCharsets.US_ASCII);

    /** @return the absolute index of {@code needle} in {@code bytes}' remaining bytes, or -1 */
    private static int indexOf(ByteBuffer bytes, byte[] needle)
    {
        int last = bytes.limit() - needle.length;
        outer:
        for (int i = bytes.position(); i <= last; i++)
        {
            for (int j = 0; j < needle.length; j++)
            {
                if (bytes.get(i + j) != needle[j])
                    continue outer;
            }
            return i;
        }
        return -1;
    }

    /** The translated relay of one chunk: decode into canonical events, encode each as the client's dialect. */
    @Benchmark
    public void relayTranslated(Blackhole bh)
    {
        translatedSource.arm();
        StreamItem item;
        while ((item = translated.read()) != null)
        {
            ByteBuffer bytes = encoder.encode((StreamEvent)item);
            bh.consume(bytes);
        }
    }
}
