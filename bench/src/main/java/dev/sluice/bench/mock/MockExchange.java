package dev.sluice.bench.mock;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.io.JsonStringEncoder;
import dev.sluice.bench.mock.MockModels.Behavior;
import dev.sluice.bench.mock.MockModels.Kind;
import dev.sluice.bench.mock.OpenAiTemplates.StreamTemplate;
import org.eclipse.jetty.http.HttpField;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpMethod;
import org.eclipse.jetty.http.HttpStatus;
import org.eclipse.jetty.http.PreEncodedHttpField;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.io.RetainableByteBuffer;
import org.eclipse.jetty.server.ConnectionMetaData;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.BufferUtil;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.Promise;
import org.eclipse.jetty.util.thread.Invocable;
import org.eclipse.jetty.util.thread.Scheduler;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One request to the mock, from the first byte to the completion of the handler callback.
 *
 * <p>State moves {@code READING → RESPONDING → DONE} and only one transition into {@code DONE} completes the
 * handler callback, whichever comes first: the last write, a failed write, the request's failure listener
 * (a stream reset, a closed connection), the {@link ClientGoneWatch}, or a deliberate cut. Failures while
 * {@code RESPONDING} are the client abandoning the request and are recorded as aborts.</p>
 */
final class MockExchange implements Consumer<Throwable>
{
    private static final Logger LOG = LoggerFactory.getLogger(MockExchange.class);
    private static final int READING = 0;
    private static final int RESPONDING = 1;
    private static final int DONE = 2;

    private static final HttpField JSON = new PreEncodedHttpField(HttpHeader.CONTENT_TYPE, "application/json");
    private static final HttpField EVENT_STREAM = new PreEncodedHttpField(HttpHeader.CONTENT_TYPE,
        "text/event-stream; charset=utf-8");
    private static final HttpField NO_CACHE = new PreEncodedHttpField(HttpHeader.CACHE_CONTROL, "no-cache");
    private static final HttpField RETRY_AFTER = new PreEncodedHttpField(HttpHeader.RETRY_AFTER, "1");
    private static final HttpField CONNECTION_CLOSE = new PreEncodedHttpField(HttpHeader.CONNECTION, "close");
    private static final HttpField ALLOW_POST = new PreEncodedHttpField(HttpHeader.ALLOW, "POST");
    private static final String REQUEST_ID = "x-request-id";

    private final MockHandler handler;
    private final Request request;
    private final Response response;
    private final Callback callback;
    private final AtomicInteger state = new AtomicInteger(READING);
    private final Callback lastWrite = Callback.from(Invocable.InvocationType.NON_BLOCKING, this::lastWriteSucceeded,
        this::clientFailed);
    private volatile RecordedRequest record;
    private volatile Scheduler.Task timer;
    private volatile SseStream stream;
    private volatile int writes;
    private volatile boolean succeeded;
    private volatile boolean lastWriteStarted;

    MockExchange(MockHandler handler, Request request, Response response, Callback callback)
    {
        this.handler = handler;
        this.request = request;
        this.response = response;
        this.callback = callback;
    }

    void start()
    {
        handler.recorder().arrived();
        // Registered first: Jetty silently drops listeners added after the request has already failed.
        request.addFailureListener(this);
        int maxBody = handler.settings().maxBodyBytes();
        if (request.getLength() > maxBody)
        {
            // Refused unread, like a provider would; recorded without its body.
            if (handler.recorder().enabled())
                handler.recorder().record(record(request.getMethod(), request.getHttpURI().getPath(), null, null));
            if (state.compareAndSet(READING, RESPONDING))
                writeLast(HttpStatus.PAYLOAD_TOO_LARGE_413, OpenAiTemplates.ERROR_TOO_LARGE, JSON);
            return;
        }
        Content.Source.asRetainableByteBuffer(request, handler.byteBufferPool(), false, maxBody, new Promise<>()
        {
            @Override
            public void succeeded(RetainableByteBuffer body)
            {
                // The buffer is released when this returns: everything that needs the bytes happens here.
                onBody(body.getByteBuffer());
            }

            @Override
            public void failed(Throwable x)
            {
                fail(x, false);
            }
        });
    }

    /** The failure listener: a reset stream, a closed connection, an idle timeout Jetty would not let us ignore. */
    @Override
    public void accept(Throwable failure)
    {
        clientClosed(failure);
    }

    boolean isResponding()
    {
        return state.get() == RESPONDING;
    }

    private void onBody(ByteBuffer body)
    {
        byte[] array;
        int offset;
        int length = body.remaining();
        if (body.hasArray())
        {
            array = body.array();
            offset = body.arrayOffset() + body.position();
        }
        else
        {
            array = BufferUtil.toArray(body);
            offset = 0;
        }

        String method = request.getMethod();
        String path = request.getHttpURI().getPath();
        boolean chat = "/v1/chat/completions".equals(path) || "/chat/completions".equals(path);
        ChatRequest chatRequest = null;
        if (chat && HttpMethod.POST.is(method))
            chatRequest = ChatRequest.scan(handler, array, offset, length);
        if (handler.recorder().enabled())
        {
            RecordedRequest recorded = record(method, path, Arrays.copyOfRange(array, offset, offset + length),
                chatRequest == null ? null : chatRequest.model());
            record = recorded;
            handler.recorder().record(recorded);
        }

        if (!state.compareAndSet(READING, RESPONDING))
            return;

        if (chat)
        {
            if (!HttpMethod.POST.is(method))
            {
                response.getHeaders().put(ALLOW_POST);
                writeLast(HttpStatus.METHOD_NOT_ALLOWED_405, invalidRequest("Invalid method for URL (" + method + " " +
                    path + ")"), JSON);
            }
            else if (chatRequest.malformed())
                writeLast(HttpStatus.BAD_REQUEST_400, OpenAiTemplates.ERROR_BAD_JSON, JSON);
            else if (chatRequest.model() == null)
                writeLast(HttpStatus.BAD_REQUEST_400, OpenAiTemplates.ERROR_NO_MODEL, JSON);
            else
                answer(chatRequest, length);
        }
        else if (HttpMethod.GET.is(method) && ("/v1/models".equals(path) || "/models".equals(path)))
            writeLast(HttpStatus.OK_200, OpenAiTemplates.MODELS, JSON);
        else if (HttpMethod.GET.is(method) && "/_mock/stats".equals(path))
            writeLast(HttpStatus.OK_200, stats(), JSON);
        else
            writeLast(HttpStatus.NOT_FOUND_404, invalidRequest("Invalid URL (" + method + " " + path + ")"), JSON);
    }

    private void answer(ChatRequest chat, int bodyLength)
    {
        Behavior behavior = Behavior.of(chat.model());
        switch (behavior.kind())
        {
            case ERROR_429:
                response.getHeaders().put(RETRY_AFTER);
                writeLast(HttpStatus.TOO_MANY_REQUESTS_429, OpenAiTemplates.ERROR_429, JSON);
                return;
            case ERROR_500:
                writeLast(HttpStatus.INTERNAL_SERVER_ERROR_500, OpenAiTemplates.ERROR_500, JSON);
                return;
            case ERROR_503:
                writeLast(HttpStatus.SERVICE_UNAVAILABLE_503, OpenAiTemplates.ERROR_503, JSON);
                return;
            case HANG:
                hang();
                return;
            default:
                break;
        }

        long extraDelay = 0;
        if (behavior.kind() == Kind.SLOW)
        {
            extraDelay = behavior.arg();
            watchClient();
        }
        long id = handler.nextId();
        long created = System.currentTimeMillis() / 1000;
        byte[] model = OpenAiTemplates.quoteModel(chat.model());
        int promptTokens = OpenAiTemplates.promptTokens(bodyLength);
        response.getHeaders().put(REQUEST_ID, "req_mock_" + id);
        if (chat.stream())
            stream(behavior, extraDelay, OpenAiTemplates.chunkPrefix(id, created, model), chat.includeUsage(), promptTokens);
        else
            complete(behavior, extraDelay, id, created, model, promptTokens);
    }

    private void complete(Behavior behavior, long extraDelay, long id, long created, byte[] model, int promptTokens)
    {
        OpenAiTemplates templates = handler.templates();
        Runnable answer;
        switch (behavior.kind())
        {
            case GARBAGE:
                answer = () -> writeLast(HttpStatus.OK_200, OpenAiTemplates.GARBAGE_BODY, JSON);
                break;
            case CUT:
            {
                byte[] body = templates.completion(false, id, created, model, promptTokens);
                answer = () -> cutBody(body, behavior.arg());
                break;
            }
            default:
            {
                byte[] body = templates.completion(behavior.kind() == Kind.TOOLS, id, created, model, promptTokens);
                answer = () -> writeLast(HttpStatus.OK_200, body, JSON);
                break;
            }
        }
        long delay = extraDelay + handler.settings().delayMillis();
        if (delay <= 0)
        {
            answer.run();
            return;
        }
        // The mock is slow on purpose: an idle connection here is not a reason to fail the request.
        request.addIdleTimeoutListener(timeout -> false);
        timer = handler.scheduler().schedule(() ->
        {
            if (isResponding())
                answer.run();
        }, delay, TimeUnit.MILLISECONDS);
        // A failure may have raced with the scheduling and missed the task.
        if (!isResponding())
            timer.cancel();
    }

    private void stream(Behavior behavior, long extraDelay, byte[] prefix, boolean includeUsage, int promptTokens)
    {
        OpenAiTemplates templates = handler.templates();
        MockProvider.Settings settings = handler.settings();
        StreamTemplate template = switch (behavior.kind())
        {
            case TOOLS -> templates.toolsStream();
            case GARBAGE -> templates.garbageStream();
            default -> templates.textStream();
        };
        int cutIndex = -1;
        if (behavior.kind() == Kind.CUT)
            cutIndex = (int)Math.min(1 + behavior.arg(), template.terminalIndex());
        long firstDelay = extraDelay + settings.firstEventMillis();
        if (firstDelay > 0 || settings.intervalMillis() > 0)
            request.addIdleTimeoutListener(timeout -> false);

        response.setStatus(HttpStatus.OK_200);
        response.getHeaders().put(EVENT_STREAM);
        response.getHeaders().put(NO_CACHE);
        SseStream sse = new SseStream(this, response, handler.scheduler(), template, includeUsage, prefix, promptTokens,
            templates.completionTokens(behavior.kind() == Kind.TOOLS), firstDelay, settings.intervalMillis(), cutIndex);
        stream = sse;
        sse.iterate();
        // A failure may have raced with the assignment above and missed the stream.
        if (!isResponding())
            sse.abort(new IOException("request failed"));
    }

    private void hang()
    {
        boolean watched = watchClient();
        // Without a watch, an HTTP/1.1 client that leaves is only noticed by the idle timeout: let that end the hang.
        request.addIdleTimeoutListener(timeout -> !watched);
    }

    /**
     * Arms the {@link ClientGoneWatch} on HTTP/1.x; HTTP/2 resets reach the failure listener without help.
     *
     * @return whether a client leaving will be noticed before the idle timeout
     */
    private boolean watchClient()
    {
        ConnectionMetaData connection = request.getConnectionMetaData();
        if (connection.getHttpVersion().getVersion() >= 20)
            return true;
        if (!new ClientGoneWatch(connection.getConnection().getEndPoint(), this).arm())
            return false;
        // Jetty closes a connection that completes with a pending read; say so, so the client does not reuse it.
        response.getHeaders().put(CONNECTION_CLOSE);
        return true;
    }

    private void cutBody(byte[] body, long bytes)
    {
        response.setStatus(HttpStatus.OK_200);
        response.getHeaders().put(JSON);
        response.getHeaders().put(HttpHeader.CONTENT_LENGTH, body.length);
        int length = (int)Math.min(bytes, body.length - 1);
        lastWriteStarted = true;
        response.write(false, ByteBuffer.wrap(body, 0, length), Callback.from(Invocable.InvocationType.NON_BLOCKING, () ->
        {
            writes++;
            cut();
        }, this::clientFailed));
    }

    private void writeLast(int status, byte[] body, HttpField contentType)
    {
        response.setStatus(status);
        response.getHeaders().put(contentType);
        lastWriteStarted = true;
        response.write(true, ByteBuffer.wrap(body), lastWrite);
    }

    /** The terminal write of a stream: it carries the handler's (guarded) callback, so completion is in one place. */
    void writeLastEvent(ByteBuffer event)
    {
        lastWriteStarted = true;
        response.write(true, event, lastWrite);
    }

    void wrote(int count)
    {
        writes = count;
    }

    private void lastWriteSucceeded()
    {
        writes++;
        if (state.getAndSet(DONE) == DONE)
        {
            if (succeeded)
                LOG.warn("{} completed successfully twice", this);
            return;
        }
        succeeded = true;
        callback.succeeded();
    }

    /** The client went away: a failed write, a reset, a closed connection. */
    void clientFailed(Throwable failure)
    {
        fail(failure, true);
    }

    /**
     * The connection or stream ended (seen by the failure listener or the {@link ClientGoneWatch}). Once the last
     * write has started, a client that read the whole answer may close before that write's callback runs: then the
     * write's outcome decides, not the close, and Jetty completes that write either way.
     */
    void clientClosed(Throwable failure)
    {
        if (!lastWriteStarted)
            clientFailed(failure);
    }

    /** Ends the response abruptly on purpose: HTTP/1.1 closes the connection, HTTP/2 resets the stream. */
    void cut()
    {
        if (state.getAndSet(DONE) == DONE)
            return;
        if (LOG.isDebugEnabled())
            LOG.debug("cutting {} after {} writes", this, writes);
        // AbortException: the response is committed, so Jetty must not try to write an error page.
        callback.failed(new Request.Handler.AbortException("mock-cut"));
    }

    private void fail(Throwable failure, boolean byClient)
    {
        int previous = state.getAndSet(DONE);
        if (previous == DONE)
        {
            // Expected: one disconnect is often reported twice (failure listener and the pending write).
            if (LOG.isDebugEnabled())
                LOG.debug("{} already completed, ignoring {}", this, failure.toString());
            return;
        }
        Scheduler.Task task = timer;
        if (task != null)
            task.cancel();
        SseStream sse = stream;
        if (sse != null)
            sse.abort(failure);
        if (previous == READING)
        {
            // Let Jetty answer a bad or oversized body (400, 413) the way it does for any handler.
            callback.failed(failure);
            return;
        }
        if (byClient && !handler.stopping())
        {
            if (LOG.isDebugEnabled())
                LOG.debug("client abandoned {}: {}", this, failure.toString());
            handler.recorder().aborted(new AbortedRequest(record, failure, writes, Instant.now()));
        }
        // AbortException: nobody is listening any more, so Jetty must not try to write an error page.
        callback.failed(failure instanceof Request.Handler.AbortException ? failure
            : new Request.Handler.AbortException(failure));
    }

    private RecordedRequest record(String method, String path, byte[] body, String model)
    {
        List<RecordedRequest.Header> headers = new ArrayList<>(request.getHeaders().size());
        for (HttpField field : request.getHeaders())
            headers.add(new RecordedRequest.Header(field.getName(), field.getValue()));
        ConnectionMetaData connection = request.getConnectionMetaData();
        long begin = request.getBeginNanoTime();
        Instant arrivedAt = Instant.now().minusNanos(Math.max(0, System.nanoTime() - begin));
        return new RecordedRequest(method, path, request.getHttpURI().getQuery(), headers, body,
            connection.getHttpVersion().asString(), connection.getProtocol(), model, arrivedAt, begin);
    }

    private byte[] stats()
    {
        Recorder recorder = handler.recorder();
        return ("{\"requests\":" + recorder.requestCount() + ",\"aborted\":" + recorder.abortedCount() + "}")
            .getBytes(StandardCharsets.UTF_8);
    }

    private static byte[] invalidRequest(String message)
    {
        return ("{\"error\":{\"message\":\"" + new String(JsonStringEncoder.getInstance().quoteAsString(message)) +
            "\",\"type\":\"invalid_request_error\",\"param\":null,\"code\":null}}").getBytes(StandardCharsets.UTF_8);
    }

    @Override
    public String toString()
    {
        return "MockExchange@" + Integer.toHexString(hashCode()) + "[" + request.getMethod() + " " +
            request.getHttpURI().getPath() + ", state=" + state.get() + "]";
    }

    /**
     * What the mock needs from a chat request, found by one pass of Jackson's streaming parser (no tree).
     *
     * @param model the top-level {@code model}, or {@code null} when absent or not a string
     * @param stream the top-level {@code stream} flag
     * @param includeUsage {@code stream_options.include_usage}
     * @param malformed whether the body is not one JSON object
     */
    record ChatRequest(String model, boolean stream, boolean includeUsage, boolean malformed)
    {
        private static final ChatRequest MALFORMED = new ChatRequest(null, false, false, true);

        static ChatRequest scan(MockHandler handler, byte[] body, int offset, int length)
        {
            try (JsonParser parser = handler.jsonFactory().createParser(body, offset, length))
            {
                if (parser.nextToken() != JsonToken.START_OBJECT)
                    return MALFORMED;
                String model = null;
                boolean stream = false;
                boolean includeUsage = false;
                JsonToken token;
                while ((token = parser.nextToken()) == JsonToken.FIELD_NAME)
                {
                    String name = parser.currentName();
                    token = parser.nextToken();
                    switch (name)
                    {
                        case "model" ->
                        {
                            // A model that is not a string is no model: 400, as at OpenAI.
                            if (token == JsonToken.VALUE_STRING)
                                model = parser.getText();
                            else
                                parser.skipChildren();
                        }
                        case "stream" -> stream = token == JsonToken.VALUE_TRUE;
                        case "stream_options" -> includeUsage = token == JsonToken.START_OBJECT && includeUsage(parser);
                        default -> parser.skipChildren();
                    }
                }
                // The whole body is tokenized, so a truncated or trailing-garbage body is a 400 like at OpenAI.
                if (token != JsonToken.END_OBJECT || parser.nextToken() != null)
                    return MALFORMED;
                return new ChatRequest(model, stream, includeUsage, false);
            }
            catch (IOException x)
            {
                return MALFORMED;
            }
        }

        private static boolean includeUsage(JsonParser parser) throws IOException
        {
            boolean includeUsage = false;
            while (parser.nextToken() == JsonToken.FIELD_NAME)
            {
                String name = parser.currentName();
                JsonToken value = parser.nextToken();
                if ("include_usage".equals(name))
                    includeUsage = value == JsonToken.VALUE_TRUE;
                else
                    parser.skipChildren();
            }
            return includeUsage;
        }
    }
}
