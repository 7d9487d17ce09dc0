package dev.sluice.bench.load;

import java.io.IOException;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.net.URI;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;

import org.eclipse.jetty.http.HttpException;
import org.eclipse.jetty.http.HttpField;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpParser;
import org.eclipse.jetty.http.HttpVersion;
import org.eclipse.jetty.io.EofException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The HTTP/1.1 transport: the same request, encoded once, written straight to a pooled keep-alive connection by
 * the thread that sends it; responses read and parsed (Jetty's {@link HttpParser}) by one I/O thread.
 *
 * <p>Why not Jetty's {@code HttpClient}: a generator that shares a core with the mock must cost little per
 * request, and a general client pays for what a generator never needs (a request object, a conversation, an
 * exchange queue under a lock, header encoding and listener notification for every request). Here a request
 * costs one {@code write} on the sending thread and one {@code read} on the I/O thread, and allocates nothing
 * (streams: one {@link SseScanner}).</p>
 *
 * <p>Connections: at most {@code maxConnections}, opened by the I/O thread as requests find none idle. A request
 * that finds none waits in a queue and is still timed from its schedule. A request ends exactly once: its
 * response read to the end, its connection failing (refused, reset, closed before the end), or its timeout
 * ({@code scheduled + timeout}, checked every {@value #TICK_MILLIS} ms), which closes the connection, the only way
 * HTTP/1.1 can cancel. A connection whose response said {@code Connection: close} is not reused.</p>
 *
 * <p>Threads: {@link #send} from the scheduler or from the I/O thread (closed-loop completions); everything else
 * on the I/O thread, except failing a connection, which whichever thread sees the failure does once (a state
 * machine per connection decides who).</p>
 */
final class Http11Transport implements Transport, Runnable
{
    private static final Logger LOG = LoggerFactory.getLogger(Http11Transport.class);
    private static final long TICK_MILLIS = 10;
    private static final long TICK_NANOS = TimeUnit.MILLISECONDS.toNanos(TICK_MILLIS);
    private static final long MAX_CONNECT_NANOS = TimeUnit.SECONDS.toNanos(15);
    private static final int READ_BUFFER_BYTES = 64 * 1024;
    private static final ByteBuffer EMPTY = ByteBuffer.allocate(0);
    /**
     * A connection idle for longer is closed instead of reused: half the gateway's default client idle timeout (30 s),
     * as a client keeps its pool's idle timeout below its server's. Otherwise a request sent on a connection the
     * server is closing for idleness meets the close on its way (the keep-alive race RFC 9112 section 9.5 leaves to
     * clients, which send such a request again); a generator that does not retry counts it as an error of the target
     * ({@code other}), in batches: a LIFO pool uses its deep connections together in a burst, and they expire together.
     */
    static final long MAX_IDLE_NANOS = TimeUnit.SECONDS.toNanos(15);

    private final LoadRun run;
    private final InetSocketAddress address;
    private final ByteBuffer request;
    private final int maxConnections;
    private final long timeoutNanos;
    private final boolean stream;
    private final long maxIdleNanos;
    // LIFO: the most recently used connection is warm in every cache.
    private final ConcurrentLinkedDeque<Connection> idle = new ConcurrentLinkedDeque<>();
    private final ConcurrentLinkedQueue<Waiting> waiting = new ConcurrentLinkedQueue<>();
    private final Set<Connection> connections = ConcurrentHashMap.newKeySet();
    private final AtomicInteger open = new AtomicInteger();
    // I/O thread only: every read lands here and is parsed before the next one.
    private final ByteBuffer readBuffer = ByteBuffer.allocateDirect(READ_BUFFER_BYTES);
    private Selector selector;
    private Thread io;
    private volatile boolean stopped;

    /**
     * @param run the run whose requests it sends
     * @param spec what to send
     * @param method the request method
     * @param maxConnections the most connections it opens
     * @param timeoutNanos a request not ended this long after its schedule is a timeout
     */
    Http11Transport(LoadRun run, LoadSpec spec, String method, int maxConnections, long timeoutNanos)
    {
        this(run, spec, method, maxConnections, timeoutNanos, MAX_IDLE_NANOS);
    }

    /**
     * @param maxIdleNanos a connection idle for longer is closed instead of reused ({@link #MAX_IDLE_NANOS}; tests)
     */
    Http11Transport(LoadRun run, LoadSpec spec, String method, int maxConnections, long timeoutNanos, long maxIdleNanos)
    {
        this.run = run;
        URI target = spec.target();
        if (!"http".equalsIgnoreCase(target.getScheme()))
            throw new IllegalArgumentException("target: " + target + " (expected: an http:// URL)");
        int port = target.getPort() > 0 ? target.getPort() : 80;
        this.address = new InetSocketAddress(target.getHost(), port);
        this.request = encode(spec, method, target, port);
        this.maxConnections = maxConnections;
        this.timeoutNanos = timeoutNanos;
        this.stream = spec.stream();
        this.maxIdleNanos = maxIdleNanos;
    }

    /** @return the whole request, read-only: request line, Host, the spec's headers, Content-Length, body */
    static ByteBuffer encode(LoadSpec spec, String method, URI target, int port)
    {
        String path = target.getRawPath() == null || target.getRawPath().isEmpty() ? "/" : target.getRawPath();
        if (target.getRawQuery() != null)
            path += "?" + target.getRawQuery();
        StringBuilder head = new StringBuilder(256).append(method).append(' ').append(path).append(" HTTP/1.1\r\n");
        head.append("Host: ").append(target.getHost()).append(target.getPort() > 0 ? ":" + port : "").append("\r\n");
        byte[] body = spec.body();
        boolean typed = false;
        for (Map.Entry<String, String> header : spec.headers().entrySet())
        {
            String name = header.getKey();
            if (HttpHeader.CONTENT_LENGTH.is(name) || HttpHeader.HOST.is(name))
                continue;
            typed |= HttpHeader.CONTENT_TYPE.is(name);
            head.append(name).append(": ").append(header.getValue()).append("\r\n");
        }
        if (body != null)
        {
            if (!typed)
                head.append("Content-Type: application/json\r\n");
            head.append("Content-Length: ").append(body.length).append("\r\n");
        }
        head.append("\r\n");
        byte[] headBytes = head.toString().getBytes(StandardCharsets.ISO_8859_1);
        ByteBuffer bytes = ByteBuffer.allocateDirect(headBytes.length + (body == null ? 0 : body.length));
        bytes.put(headBytes);
        if (body != null)
            bytes.put(body);
        return bytes.flip().asReadOnlyBuffer();
    }

    @Override
    public void start() throws IOException
    {
        selector = Selector.open();
        io = new Thread(this, "bench-load-io");
        io.setDaemon(true);
        io.start();
    }

    @Override
    public void send(long scheduledNanos, boolean measured, LoadRun.Worker worker)
    {
        Connection connection;
        while ((connection = idle.pollFirst()) != null)
        {
            // A connection the I/O thread just found closed is skipped.
            if (connection.send(scheduledNanos, measured, worker))
                return;
        }
        waiting.offer(new Waiting(scheduledNanos, measured, worker));
        // The I/O thread hands it a connection that frees up, or opens one.
        selector.wakeup();
    }

    @Override
    public void stop()
    {
        stopped = true;
        if (selector == null)
            return;
        selector.wakeup();
        try
        {
            io.join(TimeUnit.SECONDS.toMillis(5));
        }
        catch (InterruptedException x)
        {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public void run()
    {
        long nextTick = System.nanoTime() + TICK_NANOS;
        try
        {
            while (!stopped)
            {
                selector.select(this::onSelected, TICK_MILLIS);
                dispatchWaiting();
                long now = System.nanoTime();
                if (now - nextTick >= 0)
                {
                    expire(now);
                    nextTick = now + TICK_NANOS;
                }
            }
        }
        catch (Throwable x)
        {
            LOG.warn("the HTTP/1.1 I/O thread failed", x);
        }
        finally
        {
            for (Connection connection : new ArrayList<>(connections))
                connection.fail(ErrorClass.OTHER, new ClosedChannelException());
            try
            {
                selector.close();
            }
            catch (IOException x)
            {
                LOG.debug("could not close the selector", x);
            }
        }
    }

    @Override
    public String toString()
    {
        return "Http11Transport[" + address + ", " + open.get() + "/" + maxConnections + " connections]";
    }

    private void onSelected(SelectionKey key)
    {
        Connection connection = (Connection)key.attachment();
        if (!key.isValid())
            return;
        int ready = key.readyOps();
        if ((ready & SelectionKey.OP_CONNECT) != 0)
            connection.onConnectable();
        else
        {
            if ((ready & SelectionKey.OP_WRITE) != 0)
                connection.onWritable();
            if ((ready & SelectionKey.OP_READ) != 0)
                connection.onReadable();
        }
    }

    /** Gives waiting requests the connections that are idle, or opens new ones while allowed. */
    private void dispatchWaiting()
    {
        Waiting next;
        while ((next = waiting.peek()) != null)
        {
            Connection connection = idle.pollFirst();
            if (connection != null)
            {
                if (connection.send(next.scheduledNanos, next.measured, next.worker))
                    waiting.poll();
                continue;
            }
            if (open.get() >= maxConnections)
                return;
            waiting.poll();
            connect(next);
        }
    }

    private void connect(Waiting first)
    {
        open.incrementAndGet();
        Connection connection = new Connection(first);
        connections.add(connection);
        try
        {
            SocketChannel channel = SocketChannel.open();
            connection.channel = channel;
            channel.configureBlocking(false);
            channel.setOption(StandardSocketOptions.TCP_NODELAY, true);
            boolean connected = channel.connect(address);
            connection.key = channel.register(selector, connected ? SelectionKey.OP_READ : SelectionKey.OP_CONNECT, connection);
            if (connected)
                connection.onConnected();
        }
        catch (IOException | RuntimeException x)
        {
            connection.fail(ErrorClass.classify(x, false), x);
        }
    }

    /** Ends the requests that are past their deadline: waiting ones, and in flight ones with their connection. */
    private void expire(long now)
    {
        Waiting head;
        while ((head = waiting.peek()) != null && now - (head.scheduledNanos + timeoutNanos) >= 0)
        {
            if (waiting.remove(head))
            {
                if (head.measured)
                    run.recordEnd(head.scheduledNanos, now, 0, false, ErrorClass.TIMEOUT, null);
                if (head.worker != null)
                    head.worker.next();
            }
        }
        for (Connection connection : connections)
            connection.expire(now);
    }

    private long timeoutMillis()
    {
        return TimeUnit.NANOSECONDS.toMillis(timeoutNanos);
    }

    /** A request waiting for a connection. */
    private record Waiting(long scheduledNanos, boolean measured, LoadRun.Worker worker)
    {
    }

    /**
     * One keep-alive connection and the request it carries; also the parser's handler of that request's response.
     */
    private final class Connection implements HttpParser.ResponseHandler
    {
        private static final int CONNECTING = 0;
        private static final int IDLE = 1;
        private static final int BUSY = 2;
        private static final int CLOSED = 3;

        private final AtomicInteger state = new AtomicInteger(CONNECTING);
        private final HttpParser parser = new HttpParser(this);
        private final ByteBuffer out = request.duplicate();
        private final long connectDeadline;
        private SocketChannel channel;
        private SelectionKey key;
        // When it last became idle: written before it goes on the idle stack, read by whoever takes it from there.
        private long idleSince;
        // The request in flight. Written by the sender before the state becomes BUSY, read after it was seen BUSY.
        private long scheduledNanos;
        private boolean measured;
        private LoadRun.Worker worker;
        private SseScanner sse;
        private LoadRun.EventClock events;
        // I/O thread only, while BUSY.
        private int status;
        private boolean headersReceived;
        private boolean complete;
        private boolean closeAfter;
        private boolean earlyEof;
        private HttpException badMessage;

        private Connection(Waiting first)
        {
            assign(first.scheduledNanos, first.measured, first.worker);
            connectDeadline = System.nanoTime() + MAX_CONNECT_NANOS;
        }

        private void assign(long scheduled, boolean measure, LoadRun.Worker work)
        {
            scheduledNanos = scheduled;
            measured = measure;
            worker = work;
            if (stream)
            {
                sse = new SseScanner();
                events = new LoadRun.EventClock();
            }
        }

        /**
         * Sends a request on this idle connection; the caller took it from the idle stack, so owns it.
         *
         * @return whether it was sent (or failed on this connection, and was counted); {@code false} when the
         * connection was closed meanwhile, or idle for longer than the limit (it is closed now), and the request must go
         * elsewhere
         */
        boolean send(long scheduled, boolean measure, LoadRun.Worker work)
        {
            if (scheduled - idleSince > maxIdleNanos)
            {
                // Idle too long to trust (MAX_IDLE_NANOS): closed, not an error; the request goes elsewhere.
                if (state.compareAndSet(IDLE, CLOSED))
                {
                    if (LOG.isDebugEnabled())
                        LOG.debug("{} closed after {} ms idle instead of reused", this, (scheduled - idleSince) / 1_000_000);
                    close();
                }
                return false;
            }
            assign(scheduled, measure, work);
            if (!state.compareAndSet(IDLE, BUSY))
                return false;
            write();
            return true;
        }

        private void write()
        {
            out.clear();
            try
            {
                channel.write(out);
                if (out.hasRemaining())
                {
                    // A large body: the I/O thread writes the rest when the socket takes more.
                    key.interestOpsOr(SelectionKey.OP_WRITE);
                    selector.wakeup();
                }
            }
            catch (IOException | RuntimeException x)
            {
                fail(ErrorClass.classify(x, false), x);
            }
        }

        void onConnectable()
        {
            try
            {
                channel.finishConnect();
                key.interestOps(SelectionKey.OP_READ);
                onConnected();
            }
            catch (IOException | RuntimeException x)
            {
                fail(ErrorClass.CONNECT, x);
            }
        }

        void onConnected()
        {
            if (state.compareAndSet(CONNECTING, BUSY))
                write();
        }

        void onWritable()
        {
            try
            {
                channel.write(out);
                if (!out.hasRemaining())
                    key.interestOps(SelectionKey.OP_READ);
            }
            catch (IOException | RuntimeException x)
            {
                fail(ErrorClass.classify(x, headersReceived), x);
            }
        }

        void onReadable()
        {
            while (true)
            {
                readBuffer.clear();
                int read;
                try
                {
                    read = channel.read(readBuffer);
                }
                catch (IOException x)
                {
                    fail(ErrorClass.classify(x, headersReceived), x);
                    return;
                }
                if (read == 0)
                    return;
                if (read < 0)
                {
                    onEndOfStream();
                    return;
                }
                if (state.get() != BUSY)
                {
                    // Bytes nobody asked for (or a close notice): this connection cannot be trusted any more.
                    fail(ErrorClass.OTHER, new IOException("unexpected bytes on an idle connection"));
                    return;
                }
                readBuffer.flip();
                parse(readBuffer);
                if (complete)
                {
                    if (readBuffer.hasRemaining())
                        closeAfter = true;
                    completed();
                    return;
                }
                if (badMessage != null)
                {
                    fail(headersReceived ? ErrorClass.BROKEN_BODY : ErrorClass.OTHER,
                        new IOException("bad response: " + badMessage.getCode() + " " + badMessage.getReason()));
                    return;
                }
                if (read < readBuffer.capacity())
                    return;
            }
        }

        private void parse(ByteBuffer bytes)
        {
            while (bytes.hasRemaining() && !complete && badMessage == null)
            {
                int before = bytes.remaining();
                parser.parseNext(bytes);
                if (bytes.remaining() == before && !complete)
                    break;
            }
        }

        private void onEndOfStream()
        {
            if (state.get() == BUSY)
            {
                // A body that ends with the connection, or a response cut short.
                parser.atEOF();
                parser.parseNext(EMPTY);
                if (complete)
                {
                    closeAfter = true;
                    completed();
                    return;
                }
            }
            fail(headersReceived ? ErrorClass.BROKEN_BODY : ErrorClass.OTHER, new EofException("closed by the server"));
        }

        private void completed()
        {
            long now = System.nanoTime();
            long scheduled = scheduledNanos;
            boolean measure = measured;
            LoadRun.Worker work = worker;
            SseScanner scanner = sse;
            int code = status;
            boolean reuse = !closeAfter && !out.hasRemaining();
            resetResponse();
            if (!state.compareAndSet(BUSY, reuse ? IDLE : CLOSED))
                return;
            if (!reuse)
                close();
            if (measure)
                run.recordEnd(scheduled, now, code, true, null, scanner);
            if (reuse)
            {
                idleSince = now;
                idle.offerFirst(this);
            }
            if (work != null)
                work.next();
        }

        private void resetResponse()
        {
            parser.reset();
            status = 0;
            headersReceived = false;
            complete = false;
            earlyEof = false;
            badMessage = null;
        }

        void expire(long now)
        {
            int current = state.get();
            if (current == BUSY && now - (scheduledNanos + timeoutNanos) >= 0)
                fail(ErrorClass.TIMEOUT, new TimeoutException("no response " + timeoutMillis() + " ms after the schedule"));
            else if (current == CONNECTING && now - (scheduledNanos + timeoutNanos) >= 0)
                fail(ErrorClass.TIMEOUT, new TimeoutException("still connecting " + timeoutMillis() + " ms after the schedule"));
            else if (current == CONNECTING && now - connectDeadline >= 0)
                fail(ErrorClass.CONNECT, new ConnectException("connect timeout"));
        }

        /** Ends this connection, and the request it carries if any, once, from whichever thread saw it fail. */
        void fail(ErrorClass error, Throwable cause)
        {
            int previous = state.getAndSet(CLOSED);
            if (previous == CLOSED)
                return;
            if (LOG.isDebugEnabled())
                LOG.debug("{} failed as {}", this, error, cause);
            close();
            if (previous == IDLE)
            {
                idle.remove(this);
                return;
            }
            if (measured)
                run.recordEnd(scheduledNanos, System.nanoTime(), status, headersReceived, error, sse);
            if (worker != null)
                worker.next();
        }

        private void close()
        {
            state.set(CLOSED);
            if (connections.remove(this))
                open.decrementAndGet();
            try
            {
                if (channel != null)
                    channel.close();
            }
            catch (IOException x)
            {
                LOG.debug("could not close {}", this, x);
            }
            // The I/O thread may open a replacement for a waiting request.
            if (!waiting.isEmpty() && !stopped)
                selector.wakeup();
        }

        @Override
        public void startResponse(HttpVersion version, int status, String reason)
        {
            this.status = status;
            if (version != HttpVersion.HTTP_1_1)
                closeAfter = true;
        }

        @Override
        public void parsedHeader(HttpField field)
        {
            if (field.getHeader() == HttpHeader.CONNECTION && field.contains("close"))
                closeAfter = true;
        }

        @Override
        public boolean headerComplete()
        {
            headersReceived = true;
            return false;
        }

        @Override
        public boolean content(ByteBuffer content)
        {
            if (sse != null)
            {
                int ended = sse.scan(content);
                if (ended > 0 && measured)
                    run.recordEvents(events, sse, ended, scheduledNanos);
            }
            return false;
        }

        @Override
        public boolean contentComplete()
        {
            return false;
        }

        @Override
        public boolean messageComplete()
        {
            complete = true;
            return true;
        }

        @Override
        public void earlyEOF()
        {
            earlyEof = true;
        }

        @Override
        public void badMessage(HttpException failure)
        {
            badMessage = failure;
        }

        @Override
        public String toString()
        {
            return "Connection[" + address + ", state=" + state.get() + ", earlyEof=" + earlyEof + "]";
        }
    }
}
