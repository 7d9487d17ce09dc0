package dev.sluice.mock;

import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.LongAdder;

import org.eclipse.jetty.http.UriCompliance;
import org.eclipse.jetty.http2.server.HTTP2CServerConnectionFactory;
import org.eclipse.jetty.io.ByteBufferPool;
import org.eclipse.jetty.io.Connection;
import org.eclipse.jetty.server.HttpConfiguration;
import org.eclipse.jetty.server.HttpConnectionFactory;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.util.thread.QueuedThreadPool;
import org.eclipse.jetty.util.thread.ScheduledExecutorScheduler;

/**
 * A fake LLM provider that speaks OpenAI Chat Completions, Anthropic Messages and Gemini {@code generateContent}:
 * a Jetty 12 server that answers, streamed and not, fast, faithfully and observably. It stands in for real providers
 * in the gateway's end-to-end tests, the demo and the bench, and depends on no other Sluice module.
 *
 * <p>Endpoints (HTTP/1.1 and h2c, prior knowledge or {@code Upgrade}, on one port of {@code 127.0.0.1}; any path
 * prefix before the dialect's own path is accepted):</p>
 * <ul>
 *   <li>{@code POST …/chat/completions} (OpenAI): a {@code chat.completion} whose message is the configured text and
 *   whose {@code model} echoes the request's; with {@code "stream": true}, SSE {@code chat.completion.chunk} events
 *   (role, the text in {@code events} content deltas, finish, the usage chunk only if
 *   {@code stream_options.include_usage}, {@code [DONE]}).</li>
 *   <li>{@code POST …/messages} (Anthropic): a {@code message}; with {@code "stream": true}, the Messages events
 *   ({@code message_start}, {@code content_block_start}, {@code ping}, {@code events} text deltas,
 *   {@code content_block_stop}, {@code message_delta}, {@code message_stop}). Requires {@code anthropic-version},
 *   {@code model}, {@code messages} and an integer {@code max_tokens}, answering 400 {@code invalid_request_error}
 *   naming what is missing, as Anthropic does.</li>
 *   <li>{@code POST …/models/{model}:generateContent} and {@code …:streamGenerateContent?alt=sse} (Gemini): a
 *   {@code GenerateContentResponse} whose {@code modelVersion} echoes the (percent-decoded) model of the path;
 *   streamed, one chunk per SSE event ({@code data: …\r\n\r\n}), the last with {@code finishReason} and
 *   {@code usageMetadata}; without {@code alt=sse} the chunks form one JSON array. Requires {@code contents}.</li>
 *   <li>{@code POST …/messages/count_tokens} (Anthropic) and {@code POST …/models/{model}:countTokens} (Gemini): a
 *   token count of the body length / 4, after the checks the provider makes; see {@link MockTokenCounts}.</li>
 *   <li>{@code GET /v1/models} (also {@code /models}): a small model list.</li>
 *   <li>{@code GET /_mock/stats}: {@code {"requests":N,"aborted":M}}, for a mock running in another process.</li>
 * </ul>
 *
 * <p>The model name can select a misbehaviour in every dialect, after an optional routing prefix
 * ({@code anthropic/mock-tools}); see {@link MockModels}. Usage is synthetic: prompt tokens are the body length / 4,
 * answer tokens the number of content events. With {@link Builder#apiKey(String)} every chat request must carry that
 * key the dialect's way ({@code Authorization: Bearer}, {@code x-api-key}, {@code x-goog-api-key} or
 * {@code ?key=}), or it gets the provider's 401 (Gemini: 403 without a key, 400 with a wrong one).</p>
 *
 * <p>Every request is recorded (the newest {@link Builder#recordLimit(int)}) and every request the client abandoned
 * mid-answer is counted, so a test can assert what the gateway sent and that a client disconnect reached the
 * provider. Thread-safe; the inspection methods can be called while requests are in flight.</p>
 *
 * <pre>{@code
 * try (MockProvider mock = MockProvider.builder().streamProfile(Duration.ofMillis(50), Duration.ofMillis(5), 10).start())
 * {
 *     // point the client under test at mock.baseUrl(), e.g. http://127.0.0.1:54321/v1
 *     assertThat(mock.requests()).singleElement().extracting(RecordedRequest::model).isEqualTo("gpt-4o");
 *     assertThat(mock.awaitAborted(1, Duration.ofSeconds(5))).isTrue();
 * }
 * }</pre>
 *
 * <p>Standalone: {@code java dev.sluice.mock.MockProvider --port 9999 --delay-ms 0 --first-event-ms 0
 * --interval-ms 0 --events 10 --text "..."}.</p>
 */
public final class MockProvider implements AutoCloseable
{
    /** The answer when none is configured. */
    public static final String DEFAULT_TEXT = "Hello from the mock provider.";

    private final Settings settings;
    private final Recorder recorder;
    private final Server server;
    private final ServerConnector connector;
    private final LongAdder connectionsOpened = new LongAdder();
    private final MockHandler handler;

    private MockProvider(Settings settings, ByteBufferPool pool, int responseHeaderBytes)
    {
        this.settings = settings;
        this.recorder = new Recorder(settings.recordLimit());

        QueuedThreadPool threads = new QueuedThreadPool(settings.maxThreads());
        threads.setName("mock-provider");
        ScheduledExecutorScheduler scheduler = new ScheduledExecutorScheduler("mock-provider-scheduler", false);
        server = new Server(threads, scheduler, pool);

        HttpConfiguration http = new HttpConfiguration();
        http.setSendServerVersion(false);
        http.setSendXPoweredBy(false);
        // Raised only on request (MockModels.HUGE_HEADER): Jetty sizes each response's header buffer from it.
        if (responseHeaderBytes > 0)
            http.setResponseHeaderSize(responseHeaderBytes);
        // A gateway may send a Gemini model with a routing prefix as models/gemini%2Fmock-tools:generateContent;
        // Jetty refuses an encoded '/' by default, a provider's front end does not.
        http.setUriCompliance(UriCompliance.DEFAULT.with("MOCK", UriCompliance.Violation.AMBIGUOUS_PATH_SEPARATOR));
        HttpConnectionFactory http11 = new HttpConnectionFactory(http);
        HTTP2CServerConnectionFactory h2c = new HTTP2CServerConnectionFactory(http);
        // HTTP/1.1 first: Jetty switches to h2c on the prior-knowledge preface or on an Upgrade request.
        connector = new ServerConnector(server, http11, h2c);
        connector.setHost(settings.host());
        connector.setPort(settings.port());
        connector.setIdleTimeout(settings.idleTimeout().toMillis());
        // A gateway opens upstream connections in bursts under load; with the JDK's default backlog of 50 the kernel
        // drops SYNs and each dropped connect costs a 1 s retransmit, which the bench would blame on the gateway.
        connector.setAcceptQueueSize(4096);
        connector.addEventListener(new Connection.Listener()
        {
            @Override
            public void onOpened(Connection connection)
            {
                connectionsOpened.increment();
            }
        });
        server.addConnector(connector);

        handler = new MockHandler(settings, recorder);
        server.setHandler(handler);
        server.setErrorHandler(new IdleClosingErrorHandler());
        server.setStopTimeout(0);
    }

    /** @return a builder with the defaults: ephemeral port, no delays, 10 events, {@link #DEFAULT_TEXT} */
    public static Builder builder()
    {
        return new Builder();
    }

    /**
     * Starts listening.
     *
     * @return this provider, for chaining
     * @throws IllegalStateException if the server cannot start (port taken, …)
     */
    public MockProvider start()
    {
        try
        {
            handler.beginStart();
            server.start();
            return this;
        }
        catch (Exception x)
        {
            close();
            throw new IllegalStateException("mock provider could not start on " + settings.host() + ":" + settings.port(), x);
        }
    }

    /**
     * Stops the server at once: connections are closed and requests still in flight fail (they are not counted as
     * client aborts). Idempotent.
     */
    @Override
    public void close()
    {
        handler.beginStop();
        try
        {
            server.stop();
        }
        catch (Exception x)
        {
            throw new IllegalStateException("mock provider did not stop cleanly", x);
        }
    }

    /** @return the port it listens on (the real one when built with port 0); -1 before {@link #start()} */
    public int port()
    {
        return connector.getLocalPort();
    }

    /** @return the OpenAI-style base URL, {@code http://127.0.0.1:PORT/v1} */
    public String baseUrl()
    {
        return rootUrl() + "/v1";
    }

    /**
     * @return the URL without a path, {@code http://127.0.0.1:PORT}: the base URL of Anthropic's and Google's clients,
     * which add {@code /v1/messages} or {@code /v1beta/models/…} themselves
     */
    public String rootUrl()
    {
        return "http://" + settings.host() + ":" + port();
    }

    /** @return the settings it was built with */
    public Settings settings()
    {
        return settings;
    }

    /** @return the recorded requests, oldest first (at most the record limit, the newest kept) */
    public List<RecordedRequest> requests()
    {
        return recorder.requests();
    }

    /** @return the most recent recorded request, or {@code null} if there is none */
    public RecordedRequest lastRequest()
    {
        List<RecordedRequest> requests = recorder.requests();
        return requests.isEmpty() ? null : requests.get(requests.size() - 1);
    }

    /** @return how many client connections this mock opened since it started (one that switches to h2c may count twice) */
    public long connectionsOpened()
    {
        return connectionsOpened.sum();
    }

    /** @return how many requests arrived (counted even when recording is disabled) */
    public int requestCount()
    {
        return recorder.requestCount();
    }

    /** @return how many requests the client abandoned while the mock was delaying or streaming the answer */
    public int abortedCount()
    {
        return recorder.abortedCount();
    }

    /** @return the abandoned requests, oldest first */
    public List<AbortedRequest> aborted()
    {
        return recorder.aborts();
    }

    /** Forgets the recorded requests and aborts and resets both counters. */
    public void clearRecords()
    {
        recorder.clear();
    }

    /**
     * Waits until at least {@code n} requests were abandoned by their clients. A test helper: it blocks the calling
     * thread.
     *
     * @param n the number of aborts to wait for
     * @param timeout how long to wait at most
     * @return whether {@link #abortedCount()} reached {@code n} in time
     */
    public boolean awaitAborted(int n, Duration timeout)
    {
        return recorder.await(recorder::abortedCount, n, timeout);
    }

    /**
     * Waits until at least {@code n} requests arrived. A test helper: it blocks the calling thread.
     *
     * @param n the number of requests to wait for
     * @param timeout how long to wait at most
     * @return whether {@link #requestCount()} reached {@code n} in time
     */
    public boolean awaitRequests(int n, Duration timeout)
    {
        return recorder.await(recorder::requestCount, n, timeout);
    }

    @Override
    public String toString()
    {
        return "MockProvider[" + baseUrl() + ", requests=" + requestCount() + ", aborted=" + abortedCount() + "]";
    }

    /**
     * Runs the mock until the process is killed.
     *
     * <p>Options: {@code --port N} (9999), {@code --host H} (127.0.0.1), {@code --delay-ms D} (0, before a
     * non-streamed answer), {@code --first-event-ms F} (0), {@code --interval-ms I} (0), {@code --events N} (10),
     * {@code --text T}. Recording is off: a long bench run would otherwise keep every request; the counters are
     * served on {@code GET /_mock/stats}.</p>
     *
     * @param args the options above
     * @throws InterruptedException if interrupted while serving
     */
    public static void main(String[] args) throws InterruptedException
    {
        Builder builder = builder().port(9999).recordLimit(0);
        try
        {
            for (int i = 0; i < args.length; i++)
            {
                String option = args[i];
                if ("--help".equals(option) || "-h".equals(option))
                {
                    System.out.println("usage: MockProvider [--port N] [--host H] [--delay-ms D] [--first-event-ms F] " +
                        "[--interval-ms I] [--events N] [--text T] [--idle-timeout-s S]");
                    return;
                }
                if (i + 1 >= args.length)
                    throw new IllegalArgumentException(option + ": missing value");
                String value = args[++i];
                switch (option)
                {
                    case "--port" -> builder.port(Integer.parseInt(value));
                    case "--host" -> builder.host(value);
                    case "--delay-ms" -> builder.delay(Duration.ofMillis(Long.parseLong(value)));
                    case "--first-event-ms" -> builder.firstEventDelay(Duration.ofMillis(Long.parseLong(value)));
                    case "--interval-ms" -> builder.eventInterval(Duration.ofMillis(Long.parseLong(value)));
                    case "--events" -> builder.events(Integer.parseInt(value));
                    case "--text" -> builder.text(value);
                    case "--idle-timeout-s" -> builder.idleTimeout(Duration.ofSeconds(Long.parseLong(value)));
                    default -> throw new IllegalArgumentException(option + ": unknown option");
                }
            }
            builder.validate();
        }
        catch (IllegalArgumentException x)
        {
            System.err.println("mock provider: " + x.getMessage());
            System.exit(2);
            return;
        }

        MockProvider mock = builder.build().start();
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() ->
        {
            mock.close();
            stopped.countDown();
        }, "mock-provider-shutdown"));
        System.out.println("mock provider listening on " + mock.baseUrl());
        stopped.await();
    }

    /**
     * The immutable configuration of a {@link MockProvider}.
     *
     * @param host the address to bind
     * @param port the port to bind, 0 for an ephemeral one
     * @param delayMillis wait before a non-streamed answer
     * @param firstEventMillis wait before the first SSE event
     * @param intervalMillis wait before each following content event
     * @param events content events per streamed answer
     * @param text the answer
     * @param recordLimit how many requests to keep, 0 for none
     * @param idleTimeout the connector idle timeout
     * @param maxBodyBytes the largest request body accepted (413 above)
     * @param maxThreads the size of the server thread pool
     * @param apiKey the key every chat request must carry, or {@code null} (the default) to accept any or none
     */
    public record Settings(
        String host,
        int port,
        long delayMillis,
        long firstEventMillis,
        long intervalMillis,
        int events,
        String text,
        int recordLimit,
        Duration idleTimeout,
        int maxBodyBytes,
        int maxThreads,
        String apiKey)
    {
        // Validates every value; messages name the option and what was expected.
        public Settings
        {
            Objects.requireNonNull(host, "host");
            Objects.requireNonNull(text, "text");
            Objects.requireNonNull(idleTimeout, "idleTimeout");
            if (port < 0 || port > 65535)
                throw new IllegalArgumentException("port: " + port + " (expected: 0 to 65535)");
            requireNotNegative("delay", delayMillis);
            requireNotNegative("firstEventDelay", firstEventMillis);
            requireNotNegative("eventInterval", intervalMillis);
            if (text.isEmpty())
                throw new IllegalArgumentException("text: must not be empty");
            int length = text.codePointCount(0, text.length());
            if (events < 1 || events > length)
                throw new IllegalArgumentException("events: " + events + " (expected: 1 to " + length +
                    ", at most one event per character of the text; use a longer text for more events)");
            if (recordLimit < 0)
                throw new IllegalArgumentException("recordLimit: " + recordLimit + " (expected: >= 0)");
            if (idleTimeout.isNegative() || idleTimeout.isZero())
                throw new IllegalArgumentException("idleTimeout: " + idleTimeout + " (expected: > 0)");
            if (maxBodyBytes < 1)
                throw new IllegalArgumentException("maxBodyBytes: " + maxBodyBytes + " (expected: > 0)");
            if (maxThreads < 8)
                throw new IllegalArgumentException("maxThreads: " + maxThreads + " (expected: >= 8)");
            if (apiKey != null && apiKey.isBlank())
                throw new IllegalArgumentException("apiKey: must not be blank (expected: a key, or null for none)");
        }

        private static void requireNotNegative(String name, long millis)
        {
            if (millis < 0)
                throw new IllegalArgumentException(name + ": " + millis + "ms (expected: >= 0)");
        }
    }

    /**
     * Configures a {@link MockProvider}. Not thread-safe; values are validated by {@link #build()}.
     */
    public static final class Builder
    {
        private String host = "127.0.0.1";
        private int port;
        private long delayMillis;
        private long firstEventMillis;
        private long intervalMillis;
        private int events = 10;
        private String text = DEFAULT_TEXT;
        private int recordLimit = 10_000;
        private Duration idleTimeout = Duration.ofSeconds(30);
        private int maxBodyBytes = 32 * 1024 * 1024;
        private int maxThreads = 200;
        private String apiKey;
        private ByteBufferPool byteBufferPool;
        private int responseHeaderBytes;

        private Builder()
        {
        }

        /**
         * @param host the address to bind (default {@code 127.0.0.1})
         * @return this
         */
        public Builder host(String host)
        {
            this.host = host;
            return this;
        }

        /**
         * @param port the port to bind, 0 (the default) for an ephemeral one
         * @return this
         */
        public Builder port(int port)
        {
            this.port = port;
            return this;
        }

        /**
         * @param delay the wait before every non-streamed answer (default 0)
         * @return this
         */
        public Builder delay(Duration delay)
        {
            this.delayMillis = delay.toMillis();
            return this;
        }

        /**
         * The pacing of streamed answers, the same in every dialect: a stream lasts {@code firstEvent} plus
         * {@code events} intervals. The first event is OpenAI's role chunk or Anthropic's {@code message_start};
         * Gemini has no such event, so its first chunk, which is content, waits {@code firstEvent} plus one interval.
         *
         * @param firstEvent the wait before the first event
         * @param interval the wait before each content event
         * @param events the number of content events (text deltas, or Gemini chunks); they concatenate to the text
         * @return this
         */
        public Builder streamProfile(Duration firstEvent, Duration interval, int events)
        {
            return firstEventDelay(firstEvent).eventInterval(interval).events(events);
        }

        /**
         * @param firstEvent the wait before the first SSE event (default 0)
         * @return this
         */
        public Builder firstEventDelay(Duration firstEvent)
        {
            this.firstEventMillis = firstEvent.toMillis();
            return this;
        }

        /**
         * @param interval the wait before each content event after the first event (default 0)
         * @return this
         */
        public Builder eventInterval(Duration interval)
        {
            this.intervalMillis = interval.toMillis();
            return this;
        }

        /**
         * @param events content events per stream (default 10, at most one per character of the text)
         * @return this
         */
        public Builder events(int events)
        {
            this.events = events;
            return this;
        }

        /**
         * @param text the answer (default {@link MockProvider#DEFAULT_TEXT})
         * @return this
         */
        public Builder text(String text)
        {
            this.text = text;
            return this;
        }

        /**
         * @param recordLimit how many requests to keep (default 10 000, the newest); 0 disables recording
         * @return this
         */
        public Builder recordLimit(int recordLimit)
        {
            this.recordLimit = recordLimit;
            return this;
        }

        /**
         * @param idleTimeout the connector idle timeout (default 30s); a connection idle that long is closed, and a
         *     request whose bytes arrive as it expires, or whose body stalls that long, is closed without an answer
         *     (as a provider's front end does), never answered 500
         * @return this
         */
        public Builder idleTimeout(Duration idleTimeout)
        {
            this.idleTimeout = idleTimeout;
            return this;
        }

        /**
         * @param maxBodyBytes the largest request body accepted (default 32 MiB)
         * @return this
         */
        public Builder maxBodyBytes(int maxBodyBytes)
        {
            this.maxBodyBytes = maxBodyBytes;
            return this;
        }

        /**
         * @param maxThreads the size of the server thread pool (default 200)
         * @return this
         */
        public Builder maxThreads(int maxThreads)
        {
            this.maxThreads = maxThreads;
            return this;
        }

        /**
         * Makes the mock check credentials like the providers do: OpenAI {@code Authorization: Bearer KEY},
         * Anthropic {@code x-api-key: KEY}, Gemini {@code x-goog-api-key: KEY} or {@code ?key=KEY}.
         *
         * @param apiKey the key every chat request must carry; {@code null} (the default) accepts any or none
         * @return this
         */
        public Builder apiKey(String apiKey)
        {
            this.apiKey = apiKey;
            return this;
        }

        /**
         * @param byteBufferPool the server's buffer pool, e.g. an {@code ArrayByteBufferPool.Tracking} in a leak test;
         * {@code null} (the default) for Jetty's own
         * @return this
         */
        public Builder byteBufferPool(ByteBufferPool byteBufferPool)
        {
            this.byteBufferPool = byteBufferPool;
            return this;
        }

        /**
         * @param responseHeaderBytes the largest response head the mock writes, at least what
         * {@link MockModels#HUGE_HEADER} needs (a {@value MockModels#HUGE_HEADER_BYTES}-byte header); 0 (the default)
         * for Jetty's own 8 KiB, with which that model answers 500
         * @return this
         */
        public Builder responseHeaderBytes(int responseHeaderBytes)
        {
            this.responseHeaderBytes = responseHeaderBytes;
            return this;
        }

        /** @return the settings, validated */
        public Settings validate()
        {
            return new Settings(host, port, delayMillis, firstEventMillis, intervalMillis, events, text, recordLimit,
                idleTimeout, maxBodyBytes, maxThreads, apiKey);
        }

        /** @return a provider, not yet started */
        public MockProvider build()
        {
            return new MockProvider(validate(), byteBufferPool, responseHeaderBytes);
        }

        /** @return a started provider */
        public MockProvider start()
        {
            return build().start();
        }
    }
}
