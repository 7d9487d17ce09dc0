package dev.sluice.bench.load;

import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.ByteBuffer;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import org.eclipse.jetty.http.HttpFields;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpURI;
import org.eclipse.jetty.http.HttpVersion;
import org.eclipse.jetty.http.MetaData;
import org.eclipse.jetty.http2.ErrorCode;
import org.eclipse.jetty.http2.api.Session;
import org.eclipse.jetty.http2.api.Stream;
import org.eclipse.jetty.http2.client.HTTP2Client;
import org.eclipse.jetty.http2.frames.DataFrame;
import org.eclipse.jetty.http2.frames.GoAwayFrame;
import org.eclipse.jetty.http2.frames.HeadersFrame;
import org.eclipse.jetty.http2.frames.ResetFrame;
import org.eclipse.jetty.http2.frames.SettingsFrame;
import org.eclipse.jetty.io.ClientConnector;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.Promise;
import org.eclipse.jetty.util.thread.QueuedThreadPool;
import org.eclipse.jetty.util.thread.Scheduler;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The h2c transport: streams opened straight on Jetty's HTTP/2 sessions ({@link HTTP2Client}, prior knowledge),
 * without {@code HttpClient}'s request, conversation and exchange objects and its destination queue. The request
 * headers are one immutable {@link MetaData.Request} shared by every stream (HPACK indexes them after the first),
 * the body one read-only buffer; a request allocates its stream listener and two frames.
 *
 * <p>{@code connections} sessions are opened up front and requests spread over them round robin, each session up
 * to the server's {@code SETTINGS_MAX_CONCURRENT_STREAMS}; beyond that requests wait in a queue (timed from their
 * schedule all the same), as {@code HttpClient} would queue them. A session that closes is reopened by the next
 * request that picks it; a request whose session cannot be opened fails as {@code connect}. Timeouts are checked
 * every {@value #SWEEP_MILLIS} ms against {@code schedule + timeout}; a request that times out is reset.</p>
 */
final class H2cTransport implements Transport
{
    private static final Logger LOG = LoggerFactory.getLogger(H2cTransport.class);
    private static final long SWEEP_MILLIS = 10;
    // Until the server's SETTINGS say otherwise: RFC 9113 recommends a server allows at least 100.
    private static final int INITIAL_MAX_STREAMS = 100;
    // Windows large enough that a stream of events does not stall on WINDOW_UPDATEs.
    private static final int RECV_WINDOW = 16 * 1024 * 1024;
    private static final int MAX_RETRIES = 3;

    private final LoadRun run;
    private final InetSocketAddress address;
    private final MetaData.Request metaData;
    private final ByteBuffer body;
    private final long timeoutNanos;
    private final boolean stream;
    private final Slot[] slots;
    private final AtomicInteger next = new AtomicInteger();
    private final ConcurrentLinkedQueue<Exchange> waiting = new ConcurrentLinkedQueue<>();
    // Every request in the order it was sent, swept from the head for timeouts; done ones are dropped there.
    private final ConcurrentLinkedQueue<Exchange> inFlight = new ConcurrentLinkedQueue<>();
    private final HTTP2Client client;
    private volatile Scheduler.Task sweeper;
    private volatile boolean stopped;

    H2cTransport(LoadRun run, LoadSpec spec, String method, int connections, long timeoutNanos)
    {
        this.run = run;
        URI target = spec.target();
        if (!"http".equalsIgnoreCase(target.getScheme()))
            throw new IllegalArgumentException("target: " + target + " (expected: an http:// URL)");
        int port = target.getPort() > 0 ? target.getPort() : 80;
        this.address = new InetSocketAddress(target.getHost(), port);
        byte[] bytes = spec.body();
        HttpFields.Mutable fields = HttpFields.build();
        boolean typed = false;
        for (Map.Entry<String, String> header : spec.headers().entrySet())
        {
            String name = header.getKey();
            if (HttpHeader.CONTENT_LENGTH.is(name) || HttpHeader.HOST.is(name))
                continue;
            typed |= HttpHeader.CONTENT_TYPE.is(name);
            fields.add(name, header.getValue());
        }
        if (bytes != null && !typed)
            fields.add(HttpHeader.CONTENT_TYPE, "application/json");
        HttpURI uri = HttpURI.build(target).asImmutable();
        this.metaData = new MetaData.Request(method, uri, HttpVersion.HTTP_2, fields.asImmutable(),
            bytes == null ? -1 : bytes.length);
        this.body = bytes == null ? null : ByteBuffer.wrap(bytes).asReadOnlyBuffer();
        this.timeoutNanos = timeoutNanos;
        this.stream = spec.stream();
        this.slots = new Slot[connections];
        for (int i = 0; i < connections; i++)
            slots[i] = new Slot();

        QueuedThreadPool threads = new QueuedThreadPool();
        threads.setName("bench-load");
        threads.setDaemon(true);
        // No reserved threads: handing frame production over to a reserved thread costs a wake-up each time.
        threads.setReservedThreads(0);
        ClientConnector connector = new ClientConnector();
        connector.setExecutor(threads);
        long timeoutMillis = TimeUnit.NANOSECONDS.toMillis(timeoutNanos);
        connector.setConnectTimeout(java.time.Duration.ofMillis(Math.max(1, Math.min(timeoutMillis, 15_000))));
        client = new HTTP2Client(connector);
        client.setExecutor(threads);
        // Our own sweep times requests out; idle timeouts must not close what a slow stream keeps open.
        client.setIdleTimeout(Math.max(60_000, 2 * timeoutMillis));
        client.setStreamIdleTimeout(Math.max(60_000, 2 * timeoutMillis));
        client.setInitialSessionRecvWindow(RECV_WINDOW);
        client.setInitialStreamRecvWindow(RECV_WINDOW);
    }

    @Override
    public void start() throws Exception
    {
        client.start();
        // Open every session up front, as the round robin assumes; one that fails is retried by the requests.
        for (Slot slot : slots)
            slot.connect();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(16);
        for (Slot slot : slots)
        {
            while (slot.connecting.get() && System.nanoTime() - deadline < 0)
                Thread.sleep(1);
        }
        sweeper = client.getScheduler().schedule(this::sweep, SWEEP_MILLIS, TimeUnit.MILLISECONDS);
    }

    @Override
    public void send(long scheduledNanos, boolean measured, LoadRun.Worker worker)
    {
        Exchange exchange = new Exchange(scheduledNanos, measured, worker);
        inFlight.offer(exchange);
        dispatch(exchange);
    }

    @Override
    public void stop()
    {
        stopped = true;
        Scheduler.Task task = sweeper;
        if (task != null)
            task.cancel();
        // Reset what is still running: closing a session is graceful (GOAWAY), and would let the server go on with
        // the streams it has, while a stopped generator means every request it sent is abandoned.
        for (Exchange exchange : inFlight)
            exchange.cancel(ErrorClass.OTHER);
        try
        {
            client.stop();
        }
        catch (Exception x)
        {
            LOG.debug("could not stop the HTTP/2 client", x);
        }
    }

    @Override
    public String toString()
    {
        return "H2cTransport[" + address + ", " + slots.length + " connections]";
    }

    private void dispatch(Exchange exchange)
    {
        int start = next.getAndIncrement();
        for (int i = 0; i < slots.length; i++)
        {
            Slot slot = slots[Math.floorMod(start + i, slots.length)];
            int generation = slot.tryAcquire();
            if (generation >= 0)
            {
                slot.send(exchange, generation);
                return;
            }
        }
        waiting.offer(exchange);
        // Sessions that are down start reopening now: their success or failure settles what waits, even if an
        // attempt ended between the tries above and the queueing. A stream that ended meanwhile: look again.
        for (Slot slot : slots)
        {
            if (slot.session == null)
                slot.connect();
        }
        drainWaiting();
    }

    /** Gives waiting requests the stream slots that freed up, and makes closed sessions reopen. */
    private void drainWaiting()
    {
        while (!waiting.isEmpty())
        {
            Slot free = null;
            int generation = -1;
            int start = next.getAndIncrement();
            for (int i = 0; i < slots.length && free == null; i++)
            {
                Slot slot = slots[Math.floorMod(start + i, slots.length)];
                generation = slot.tryAcquire();
                if (generation >= 0)
                    free = slot;
            }
            if (free == null)
                return;
            Exchange exchange = waiting.poll();
            if (exchange == null)
            {
                free.release(generation);
                return;
            }
            if (exchange.done.get())
                free.release(generation);
            else
                free.send(exchange, generation);
        }
    }

    private void sweep()
    {
        if (stopped)
            return;
        try
        {
            long now = System.nanoTime();
            Exchange head;
            while ((head = inFlight.peek()) != null)
            {
                if (!head.done.get() && now - (head.scheduledNanos + timeoutNanos) < 0)
                    break;
                inFlight.poll();
                if (!head.done.get())
                    head.timeout();
            }
        }
        finally
        {
            if (!stopped)
                sweeper = client.getScheduler().schedule(this::sweep, SWEEP_MILLIS, TimeUnit.MILLISECONDS);
        }
    }

    /**
     * One connection: its session (or none while it is being opened) and how many streams it carries. Each session
     * it opens is a new generation with its own count: streams of a session that died give nothing back to the next.
     */
    private final class Slot implements Session.Listener, Promise<Session>
    {
        private final AtomicInteger streams = new AtomicInteger();
        private final AtomicBoolean connecting = new AtomicBoolean();
        private volatile Session session;
        private volatile int generation;
        private volatile int maxStreams = INITIAL_MAX_STREAMS;

        /**
         * @return the generation of the open session in which it took a stream slot, or -1 for none (a closed
         * session starts reopening instead)
         */
        int tryAcquire()
        {
            Session current = session;
            int taken = generation;
            if (current == null || current.isClosed())
            {
                session = null;
                connect();
                return -1;
            }
            while (true)
            {
                int count = streams.get();
                if (count >= maxStreams)
                    return -1;
                if (streams.compareAndSet(count, count + 1))
                    return taken;
            }
        }

        void release(int taken)
        {
            if (taken == generation)
                streams.decrementAndGet();
        }

        void connect()
        {
            if (stopped || !connecting.compareAndSet(false, true))
                return;
            client.connect(address, this, this);
        }

        void send(Exchange exchange, int taken)
        {
            Session current = session;
            if (current == null)
            {
                release(taken);
                exchange.end(ErrorClass.OTHER);
                return;
            }
            exchange.generation = taken;
            exchange.slot = this;
            current.newStream(new HeadersFrame(metaData, null, body == null), exchange, exchange);
        }

        @Override
        public void succeeded(Session opened)
        {
            generation++;
            streams.set(0);
            session = opened;
            connecting.set(false);
            drainWaiting();
        }

        @Override
        public void failed(Throwable failure)
        {
            connecting.set(false);
            LOG.debug("could not open an h2c session to {}", address, failure);
            // The requests waiting for it, and those that find it closed, fail as this one did.
            ErrorClass error = ErrorClass.classify(failure, false);
            Exchange exchange;
            while ((exchange = waiting.poll()) != null)
                exchange.end(error);
        }

        @Override
        public void onSettings(Session source, SettingsFrame frame)
        {
            Integer max = frame.getSettings().get(SettingsFrame.MAX_CONCURRENT_STREAMS);
            if (max != null)
                maxStreams = max;
            drainWaiting();
        }

        @Override
        public void onClose(Session source, GoAwayFrame frame, Callback callback)
        {
            if (session == source)
                session = null;
            callback.succeeded();
        }

        @Override
        public void onFailure(Session source, Throwable failure, Callback callback)
        {
            if (session == source)
                session = null;
            callback.succeeded();
        }
    }

    /**
     * One request: the promise of its stream, the listener of its response, the callback of its body. Jetty calls
     * the listener methods of one stream one after the other; {@link #end} counts the request once, whoever calls it.
     */
    private final class Exchange implements Stream.Listener, Promise<Stream>, Callback
    {
        private final long scheduledNanos;
        private final boolean measured;
        private final LoadRun.Worker worker;
        private final AtomicBoolean done = new AtomicBoolean();
        private final AtomicBoolean released = new AtomicBoolean();
        private int retries;
        private final SseScanner sse;
        private final LoadRun.EventClock events;
        private volatile Slot slot;
        private volatile int generation;
        private volatile Stream opened;
        private volatile int status;
        private volatile boolean headersReceived;

        Exchange(long scheduledNanos, boolean measured, LoadRun.Worker worker)
        {
            this.scheduledNanos = scheduledNanos;
            this.measured = measured;
            this.worker = worker;
            this.sse = stream ? new SseScanner() : null;
            this.events = stream ? new LoadRun.EventClock() : null;
        }

        /** The stream was opened: send the body, or reset a stream whose request already timed out. */
        @Override
        public void succeeded(Stream result)
        {
            opened = result;
            if (done.get())
            {
                reset(result);
                return;
            }
            if (body != null)
                result.data(new DataFrame(result.getId(), body.duplicate(), true), this);
        }

        /** The body was sent. */
        @Override
        public void succeeded()
        {
        }

        /** The stream could not be opened, or the body not sent. */
        @Override
        public void failed(Throwable failure)
        {
            Slot current = slot;
            Session session = current == null ? null : current.session;
            // A stream refused before it existed, on a session that is fine (the session still counted a stream that
            // had just ended): the request was not sent, so it waits for a stream again, a few times at most.
            if (opened == null && session != null && !session.isClosed() && retries++ < MAX_RETRIES && !done.get())
            {
                LOG.debug("retrying a stream that could not be opened", failure);
                slot = null;
                current.release(generation);
                waiting.offer(this);
                drainWaiting();
                return;
            }
            end(ErrorClass.classify(failure, headersReceived));
        }

        @Override
        public InvocationType getInvocationType()
        {
            // Only counting and timestamping: Jetty may call back on the thread that has the frame.
            return InvocationType.NON_BLOCKING;
        }

        @Override
        public void onHeaders(Stream source, HeadersFrame frame)
        {
            MetaData metaData = frame.getMetaData();
            if (metaData instanceof MetaData.Response response)
            {
                // An interim 1xx response is not the answer.
                if (response.getStatus() < 200)
                {
                    source.demand();
                    return;
                }
                status = response.getStatus();
                headersReceived = true;
            }
            if (frame.isEndStream())
                end(null);
            else
                source.demand();
        }

        @Override
        public void onDataAvailable(Stream source)
        {
            while (true)
            {
                Stream.Data data = source.readData();
                if (data == null)
                {
                    source.demand();
                    return;
                }
                DataFrame frame = data.frame();
                if (sse != null)
                {
                    int ended = sse.scan(frame.getByteBuffer());
                    if (ended > 0 && measured)
                        run.recordEvents(events, sse, ended, scheduledNanos);
                }
                boolean last = frame.isEndStream();
                data.release();
                if (last)
                {
                    end(null);
                    return;
                }
            }
        }

        @Override
        public void onReset(Stream source, ResetFrame frame, Callback callback)
        {
            if (LOG.isDebugEnabled())
                LOG.debug("stream {} reset by the server: {}", source.getId(), ErrorCode.toString(frame.getError(), null));
            end(headersReceived ? ErrorClass.BROKEN_BODY : ErrorClass.OTHER);
            callback.succeeded();
        }

        @Override
        public void onFailure(Stream source, int error, String reason, Throwable failure, Callback callback)
        {
            if (LOG.isDebugEnabled())
                LOG.debug("stream {} failed: {} {}", source.getId(), ErrorCode.toString(error, null), reason, failure);
            end(ErrorClass.classify(failure, headersReceived));
            callback.succeeded();
        }

        @Override
        public void onIdleTimeout(Stream source, TimeoutException x, Promise<Boolean> promise)
        {
            end(ErrorClass.TIMEOUT);
            promise.succeeded(true);
        }

        void timeout()
        {
            cancel(ErrorClass.TIMEOUT);
        }

        /**
         * Ends the request as {@code failure} if it is still running, and resets its stream. Its stream slot is
         * given back once the reset is written: a new stream sent before it would exceed the server's limit.
         */
        void cancel(ErrorClass failure)
        {
            if (!end(failure, false))
                return;
            Stream current = opened;
            if (current != null)
                reset(current);
            else
                releaseSlot();
        }

        private void reset(Stream stream)
        {
            ResetFrame frame = new ResetFrame(stream.getId(), ErrorCode.CANCEL_STREAM_ERROR.code);
            stream.reset(frame, Callback.from(this::releaseSlot, x -> releaseSlot()));
        }

        private void releaseSlot()
        {
            Slot current = slot;
            if (current != null && released.compareAndSet(false, true))
            {
                current.release(generation);
                drainWaiting();
            }
        }

        /**
         * @param failure the class of the failure, or {@code null} when the response was read to the end
         * @return whether this call ended the request (it was still running)
         */
        boolean end(ErrorClass failure)
        {
            return end(failure, true);
        }

        private boolean end(ErrorClass failure, boolean release)
        {
            if (!done.compareAndSet(false, true))
                return false;
            long now = System.nanoTime();
            if (release)
                releaseSlot();
            if (measured)
                run.recordEnd(scheduledNanos, now, status, headersReceived, failure, sse);
            if (worker != null)
                worker.next();
            return true;
        }
    }
}
