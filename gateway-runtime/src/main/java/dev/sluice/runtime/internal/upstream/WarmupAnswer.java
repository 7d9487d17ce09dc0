package dev.sluice.runtime.internal.upstream;

import dev.sluice.api.codec.DialectCodec;
import dev.sluice.api.codec.StreamEncoder;
import dev.sluice.api.exchange.Exchange;
import dev.sluice.api.exchange.Exchange.Stage;
import dev.sluice.api.model.ChatRequest;
import dev.sluice.api.model.ChatResponse;
import dev.sluice.api.model.ContentPart;
import dev.sluice.api.model.ChatResponse.StopReason;
import dev.sluice.api.model.StreamEvent;
import dev.sluice.api.model.Usage;
import dev.sluice.api.upstream.BodyChunk;
import dev.sluice.api.upstream.BodySource;
import dev.sluice.api.upstream.UpstreamRequest;
import dev.sluice.api.upstream.UpstreamResponse;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The provider's answer to a warm-up exchange ({@link Exchange#warmup()}), made in the process: a short successful
 * answer in the upstream's dialect, encoded by that dialect's codec from a canonical response — a complete body, or
 * for a streamed request the events of a stream of deltas — in one of a few shapes taken in turn, so that the client
 * binding reads, relays or translates it
 * exactly as it would a provider's. Nothing leaves the process: either this object is the upstream's response, or the
 * upstream sends its bytes over loopback to the gateway's own port, which sends them back
 * ({@link JettyUpstream#warmupsThrough}), so that the HTTP client's code is exercised too.
 *
 * <p>The body is one chunk, available at once; reading it allocates the encoded bytes once per exchange.
 */
final class WarmupAnswer implements UpstreamResponse, BodySource
{
    /**
     * The answers' shapes, taken in turn: a one-word answer with the smallest usage, and a sentence of several deltas
     * with text that JSON escapes, multi-byte characters and a provider's usage details (cached and reasoning tokens,
     * numbers of several digits) — what providers send, so that the client bindings' readers are compiled for it.
     */
    private static final List<Shape> SHAPES = List.of(Shape.of(List.of("warm"), new Usage(1, 1, 0, 0, 0)),
        Shape.of(List.of("The gateway ", "is warm: ", "\"ready\" ", "means compiled —\n", "prêt, ", "bereit, ", "準備完了",
            "."), new Usage(1843, 96, 1024, 0, 32)));
    private static final AtomicInteger TURN = new AtomicInteger();

    private final String contentType;
    private final byte[] body;
    private final Exchange exchange;
    private boolean read;

    private WarmupAnswer(String contentType, byte[] body, Exchange exchange)
    {
        this.contentType = contentType;
        this.body = body;
        this.exchange = exchange;
    }

    /**
     * @param codec    the upstream's dialect
     * @param request  what the client binding would have sent (a streamed answer's encoder may decode it)
     * @param exchange the warm-up exchange
     * @return a 200 answer to {@code request} in {@code codec}'s dialect, streamed if the exchange asked for a stream
     */
    static WarmupAnswer of(DialectCodec codec, UpstreamRequest request, Exchange exchange)
    {
        String model = exchange.targetModel();
        Shape shape = SHAPES.get(Math.floorMod(TURN.getAndIncrement(), SHAPES.size()));
        if (!exchange.stream())
        {
            ChatResponse response = new ChatResponse("warmup", model, List.of(new ContentPart.Text(shape.text(), null)),
                StopReason.END_TURN, null, shape.usage(), 0, Map.of());
            return new WarmupAnswer("application/json", codec.encodeResponse(response), exchange);
        }
        StreamEncoder encoder = codec.newStreamEncoder(() -> decoded(codec, request));
        ByteArrayOutputStream out = new ByteArrayOutputStream(1024);
        append(out, encoder.encode(new StreamEvent.MessageStart("warmup", model, 0, null)));
        append(out, encoder.encode(new StreamEvent.TextStart(0)));
        for (String delta : shape.deltas())
            append(out, encoder.encode(new StreamEvent.TextDelta(0, delta)));
        append(out, encoder.encode(new StreamEvent.BlockStop(0)));
        append(out, encoder.encode(new StreamEvent.Stop(StopReason.END_TURN, null, shape.usage())));
        append(out, encoder.encode(new StreamEvent.UsageReport(shape.usage())));
        append(out, encoder.end());
        return new WarmupAnswer(encoder.contentType(), out.toByteArray(), exchange);
    }

    private static ChatRequest decoded(DialectCodec codec, UpstreamRequest request)
    {
        return codec.decodeRequest(request.body());
    }

    private static void append(ByteArrayOutputStream out, ByteBuffer buffer)
    {
        if (buffer == null)
            return;
        ByteBuffer b = buffer.duplicate();
        byte[] bytes = new byte[b.remaining()];
        b.get(bytes);
        out.writeBytes(bytes);
    }

    /** @return the answer's media type, as a provider would send it */
    String contentType()
    {
        return contentType;
    }

    /** @return the answer's whole body (not a copy) */
    byte[] bytes()
    {
        return body;
    }

    @Override
    public int status()
    {
        return 200;
    }

    @Override
    public String header(String name)
    {
        if ("content-type".equalsIgnoreCase(name))
            return contentType;
        if ("content-length".equalsIgnoreCase(name))
            return exchange.stream() ? null : Integer.toString(body.length);
        return null;
    }

    @Override
    public long contentLength()
    {
        return exchange.stream() ? -1 : body.length;
    }

    @Override
    public BodySource body()
    {
        return this;
    }

    @Override
    public BodyChunk read()
    {
        if (read)
            return null;
        read = true;
        exchange.mark(Stage.UPSTREAM_END);
        return new Chunk(ByteBuffer.wrap(body).asReadOnlyBuffer());
    }

    @Override
    public void demand(Runnable onAvailable)
    {
        // The body is one chunk, there from the start: a reader demands only after it read it (then nothing is left).
        onAvailable.run();
    }

    @Override
    public void fail(Throwable cause)
    {
        read = true;
    }

    /** One shape of answer: its text, whole and in the deltas a stream sends it in, and its usage. */
    private record Shape(List<String> deltas, String text, Usage usage)
    {
        static Shape of(List<String> deltas, Usage usage)
        {
            return new Shape(deltas, String.join("", deltas), usage);
        }
    }

    /** The whole body; nothing pooled. */
    private record Chunk(ByteBuffer buffer) implements BodyChunk
    {
        @Override
        public boolean last()
        {
            return true;
        }

        @Override
        public Throwable failure()
        {
            return null;
        }

        @Override
        public void release()
        {
            // Not pooled.
        }
    }
}
