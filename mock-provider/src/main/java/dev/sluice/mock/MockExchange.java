package dev.sluice.mock;

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
import dev.sluice.mock.DialectTemplates.Answer;
import dev.sluice.mock.DialectTemplates.ErrorReply;
import dev.sluice.mock.DialectTemplates.Shape;
import dev.sluice.mock.MockDialect.GeminiPath;
import dev.sluice.mock.MockModels.Behavior;
import dev.sluice.mock.MockModels.Kind;
import org.eclipse.jetty.http.BadMessageException;
import org.eclipse.jetty.http.HttpField;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpMethod;
import org.eclipse.jetty.http.HttpStatus;
import org.eclipse.jetty.http.PreEncodedHttpField;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.server.ConnectionMetaData;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.BufferUtil;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.URIUtil;
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

    private static final HttpField JSON = DialectTemplates.JSON;
    private static final HttpField NO_CACHE = new PreEncodedHttpField(HttpHeader.CACHE_CONTROL, "no-cache");
    private static final HttpField RETRY_AFTER = new PreEncodedHttpField(HttpHeader.RETRY_AFTER, "1");
    private static final HttpField CONNECTION_CLOSE = new PreEncodedHttpField(HttpHeader.CONNECTION, "close");
    private static final HttpField ALLOW_POST = new PreEncodedHttpField(HttpHeader.ALLOW, "POST");
    static final String REQUEST_ID_PREFIX = "req_mock_";

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
            MockDialect dialect = MockDialect.ofPath(decodedPath());
            if (handler.recorder().enabled())
            {
                handler.recorder().record(record(request.getMethod(), request.getHttpURI().getPath(), null, dialect,
                    null, false));
            }
            if (state.compareAndSet(READING, RESPONDING))
            {
                DialectTemplates templates = handler.templates(dialect == null ? MockDialect.OPENAI : dialect);
                writeError(templates, templates.tooLarge(maxBody), handler.nextId());
            }
            return;
        }
        // Fast path: a small body usually arrives whole with the headers, as one last chunk; read in place, it needs
        // no accumulating buffer. Anything else goes the general way, starting with the chunk already read.
        Content.Chunk first = request.read();
        if (first != null && first.isLast() && !Content.Chunk.isFailure(first) && first.remaining() <= maxBody)
        {
            try
            {
                onBody(first.getByteBuffer());
            }
            finally
            {
                first.release();
            }
            return;
        }
        Content.Source body = first == null ? request : new Unread(request, first);
        new BodyReader(body, maxBody, request.getLength()).run();
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
        int length = body.remaining();
        String method = request.getMethod();
        String path = request.getHttpURI().getPath();
        MockDialect dialect = MockDialect.ofPath(decodedPath());
        GeminiPath gemini = dialect == MockDialect.GEMINI ? GeminiPath.parse(decodedPath()) : null;
        MockDialect counting = dialect == null ? MockTokenCounts.ofPath(decodedPath()) : null;
        boolean post = HttpMethod.POST.is(method);
        ChatRequest chat = null;
        if ((dialect != null || counting != null) && post)
            chat = handler.scan(body);
        String model = gemini != null ? gemini.model() : counting == MockDialect.GEMINI
            ? MockTokenCounts.geminiModel(decodedPath()) : chat == null ? null : chat.model();
        boolean stream = gemini != null ? gemini.stream() : chat != null && chat.stream();
        if (handler.recorder().enabled())
        {
            RecordedRequest recorded = record(method, path, BufferUtil.toArray(body), dialect != null ? dialect : counting,
                model, stream);
            record = recorded;
            handler.recorder().record(recorded);
        }

        if (!state.compareAndSet(READING, RESPONDING))
            return;

        if (dialect != null)
        {
            DialectTemplates templates = handler.templates(dialect);
            long id = handler.nextId();
            ErrorReply refusal;
            if (!post)
            {
                response.getHeaders().put(ALLOW_POST);
                refusal = templates.methodNotAllowed(method, path);
            }
            else
            {
                refusal = authorize(dialect, templates);
                if (refusal == null)
                    refusal = chat.malformed() ? templates.badJson() : templates.validate(chat, request.getHeaders());
            }
            if (refusal != null)
                writeError(templates, refusal, id);
            else
                answer(templates, id, model, stream, chat, length);
        }
        else if (counting != null)
            count(counting, method, path, chat, length);
        else if (post && MockEmbeddings.serves(decodedPath()))
        {
            MockEmbeddings.Answer answer = MockEmbeddings.answer(decodedPath(), BufferUtil.toArray(body));
            writeLast(answer.status(), answer.body(), JSON);
        }
        else if (HttpMethod.GET.is(method) && ("/v1/models".equals(path) || "/models".equals(path)))
            writeLast(HttpStatus.OK_200, OpenAiTemplates.MODELS, JSON);
        else if (HttpMethod.GET.is(method) && "/_mock/stats".equals(path))
            writeLast(HttpStatus.OK_200, stats(), JSON);
        else
            writeLast(HttpStatus.NOT_FOUND_404, OpenAiTemplates.notFound(method, path), JSON);
    }

    /** Answers a token count: {@link MockTokenCounts}. */
    private void count(MockDialect dialect, String method, String path, ChatRequest scanned, int bodyLength)
    {
        DialectTemplates templates = handler.templates(dialect);
        long id = handler.nextId();
        ErrorReply refusal;
        if (!HttpMethod.POST.is(method))
        {
            response.getHeaders().put(ALLOW_POST);
            refusal = templates.methodNotAllowed(method, path);
        }
        else
        {
            refusal = authorize(dialect, templates);
            if (refusal == null)
                refusal = MockTokenCounts.validate(dialect, templates, scanned, request.getHeaders());
        }
        if (refusal != null)
        {
            writeError(templates, refusal, id);
            return;
        }
        String requestIdHeader = templates.requestIdHeader();
        if (requestIdHeader != null)
            response.getHeaders().put(requestIdHeader, REQUEST_ID_PREFIX + id);
        writeLast(HttpStatus.OK_200, MockTokenCounts.answer(dialect, bodyLength), JSON);
    }

    /** @return the request path, percent-decoded (a Gemini model may arrive with its {@code /} encoded) */
    private String decodedPath()
    {
        String path = request.getHttpURI().getPath();
        if (path.indexOf('%') < 0)
            return path;
        try
        {
            return URIUtil.decodePath(path);
        }
        catch (IllegalArgumentException x)
        {
            return path;
        }
    }

    /**
     * Checks the dialect's credentials when the mock was configured with a key: OpenAI
     * {@code Authorization: Bearer}, Anthropic {@code x-api-key}, Gemini {@code x-goog-api-key} or {@code ?key=}.
     *
     * @return the refusal, or {@code null} when the request may pass
     */
    private ErrorReply authorize(MockDialect dialect, DialectTemplates templates)
    {
        String expected = handler.settings().apiKey();
        if (expected == null)
            return null;
        String given = presentedKey(dialect);
        if (given == null)
            return templates.missingKey();
        return expected.equals(given) ? null : templates.wrongKey();
    }

    /** @return the credential the request carries the dialect's way, or {@code null} */
    private String presentedKey(MockDialect dialect)
    {
        return switch (dialect)
        {
            case OPENAI, OPENAI_RESPONSES -> bearer(request.getHeaders().get(HttpHeader.AUTHORIZATION));
            case ANTHROPIC -> request.getHeaders().get("x-api-key");
            case GEMINI ->
            {
                String header = request.getHeaders().get("x-goog-api-key");
                yield header != null ? header : queryParameter("key");
            }
        };
    }

    private static String bearer(String authorization)
    {
        if (authorization == null)
            return null;
        if (authorization.regionMatches(true, 0, "Bearer ", 0, 7))
            return authorization.substring(7).trim();
        return authorization;
    }

    /** @return the first value of a query parameter, percent-decoded, or {@code null} */
    private String queryParameter(String name)
    {
        String query = request.getHttpURI().getQuery();
        if (query == null)
            return null;
        for (String pair : query.split("&"))
        {
            int equals = pair.indexOf('=');
            String key = equals < 0 ? pair : pair.substring(0, equals);
            if (name.equals(key))
                return equals < 0 ? "" : URIUtil.decodePath(pair.substring(equals + 1).replace('+', ' '));
        }
        return null;
    }

    private void answer(DialectTemplates templates, long id, String model, boolean stream, ChatRequest chat,
                        int bodyLength)
    {
        String requestIdHeader = templates.requestIdHeader();
        if (requestIdHeader != null)
            response.getHeaders().put(requestIdHeader, REQUEST_ID_PREFIX + id);
        Behavior behavior = Behavior.of(model);
        templates.rateLimits(response.getHeaders(), behavior.kind() == Kind.ERROR_429);
        switch (behavior.kind())
        {
            case ERROR_429:
                writeError(templates, templates.rateLimited(), id);
                return;
            case ERROR_500:
                writeError(templates, templates.serverError(), id);
                return;
            case ERROR_503:
                writeError(templates, templates.unavailable(), id);
                return;
            case ERROR_529:
                writeError(templates, templates.overloaded(), id);
                return;
            case ECHO_KEY:
                writeError(templates, templates.invalid("Incorrect API key provided: " + presentedKey(templates.dialect())), id);
                return;
            case STREAM_ERROR:
                if (!stream)
                {
                    writeError(templates, templates.serverError(), id);
                    return;
                }
                break;
            case HANG:
                hang();
                return;
            case STREAM_HTML:
            case STREAM_BINARY:
                if (!stream)
                {
                    writeLast(HttpStatus.OK_200, garbageLines(behavior.kind()), templates.jsonContentType());
                    return;
                }
                break;
            case HUGE_HEADER:
                response.getHeaders().put("x-mock-padding", HugeHeader.VALUE);
                break;
            default:
                break;
        }

        long extraDelay = 0;
        if (behavior.kind() == Kind.SLOW)
        {
            extraDelay = behavior.arg();
            watchClient();
        }
        Answer answer = switch (behavior.kind())
        {
            case TOOLS -> Answer.TOOLS;
            case THINKING -> Answer.THINKING;
            case USAGE_CACHED -> Answer.CACHED;
            case MAX_TOKENS -> Answer.MAX_TOKENS;
            case REFUSAL -> Answer.REFUSAL;
            case GARBAGE -> Answer.GARBAGE;
            default -> Answer.TEXT;
        };
        Shape shape = templates.shape(answer);
        int promptTokens = promptTokens(bodyLength);
        // Half the prompt "was" in the cache: enough for a test to tell cached from uncached tokens.
        long cachedTokens = answer == Answer.CACHED ? Math.max(1, promptTokens / 2) : 0;
        Template.Values values = new Template.Values(id, System.currentTimeMillis() / 1000, handler.quote(model),
            promptTokens, cachedTokens, shape.completionTokens(), shape.thoughtsTokens());
        if (behavior.kind() == Kind.SHORT_LENGTH)
        {
            // Streamed or not: the JSON body, since what is tested is the connection, not the events.
            shortLength(shape.body().bytes(values), (int)Math.min(behavior.arg(), Integer.MAX_VALUE),
                templates.jsonContentType());
            return;
        }
        if (stream)
        {
            // The alternate stream: OpenAI with include_usage, Gemini without alt=sse (a JSON array).
            boolean alternate = switch (templates.dialect())
            {
                case OPENAI -> chat.includeUsage();
                case GEMINI -> !"sse".equals(queryParameter("alt"));
                case ANTHROPIC, OPENAI_RESPONSES -> false;
            };
            stream(templates, behavior, extraDelay, shape.stream(alternate), alternate, values);
        }
        else
            complete(templates, behavior, extraDelay, shape, values);
    }

    /** The usage a request is billed: a rough 4 bytes per token of request body, like a tokenizer would guess. */
    static int promptTokens(int bodyLength)
    {
        return Math.max(1, bodyLength / 4);
    }

    private void complete(DialectTemplates templates, Behavior behavior, long extraDelay, Shape shape,
                          Template.Values values)
    {
        HttpField contentType = templates.jsonContentType();
        byte[] body = shape.body().bytes(values);
        Runnable answer;
        if (behavior.kind() == Kind.CUT)
            answer = () -> cutBody(body, behavior.arg(), contentType);
        else if (behavior.kind() == Kind.TRICKLE)
            answer = () -> trickle(body, contentType);
        else
            answer = () -> writeLast(HttpStatus.OK_200, body, contentType);
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

    private void stream(DialectTemplates templates, Behavior behavior, long extraDelay, StreamScript script,
                        boolean alternate, Template.Values values)
    {
        MockProvider.Settings settings = handler.settings();
        int stopIndex = -1;
        byte[] error = null;
        if (behavior.kind() == Kind.CUT || behavior.kind() == Kind.STREAM_ERROR)
            stopIndex = script.stopIndex(behavior.arg());
        if (behavior.kind() == Kind.STREAM_HTML || behavior.kind() == Kind.STREAM_BINARY)
        {
            // The garbage takes the place of the in-stream error: written last, then the stream ends.
            stopIndex = script.stopIndex(behavior.arg());
            error = garbageLines(behavior.kind());
        }
        if (behavior.kind() == Kind.STREAM_ERROR)
            error = templates.streamError(alternate, stopIndex == 0).bytes(values);
        long firstDelay = extraDelay + settings.firstEventMillis();
        if (firstDelay > 0 || settings.intervalMillis() > 0)
            request.addIdleTimeoutListener(timeout -> false);

        response.setStatus(HttpStatus.OK_200);
        response.getHeaders().put(templates.streamContentType(alternate));
        response.getHeaders().put(NO_CACHE);
        if (behavior.kind() == Kind.TRICKLE)
        {
            java.io.ByteArrayOutputStream all = new java.io.ByteArrayOutputStream();
            for (int i = 0; i < script.size(); i++)
                all.writeBytes(script.event(i).bytes(values));
            new Trickle(all.toByteArray()).iterate();
            return;
        }
        SseStream sse = new SseStream(this, response, handler.scheduler(), script, values, firstDelay,
            settings.intervalMillis(), stopIndex, error);
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

    private void cutBody(byte[] body, long bytes, HttpField contentType)
    {
        response.setStatus(HttpStatus.OK_200);
        response.getHeaders().put(contentType);
        response.getHeaders().put(HttpHeader.CONTENT_LENGTH, body.length);
        int length = (int)Math.min(bytes, body.length - 1);
        lastWriteStarted = true;
        response.write(false, ByteBuffer.wrap(body, 0, length), Callback.from(Invocable.InvocationType.NON_BLOCKING, () ->
        {
            writes++;
            cut();
        }, this::clientFailed));
    }

    /** 30 lines of an HTML error page, or of binary bytes (never CR or LF inside a line). */
    static byte[] garbageLines(Kind kind)
    {
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
        for (int line = 0; line < 30; line++)
        {
            if (kind == Kind.STREAM_HTML)
            {
                String html = switch (line)
                {
                    case 0 -> "<!DOCTYPE html>";
                    case 1 -> "<html>";
                    case 2 -> "<head><title>502 Bad Gateway</title></head>";
                    case 3 -> "<body>";
                    case 28 -> "</body>";
                    case 29 -> "</html>";
                    default -> "<p>The upstream server returned an invalid response (line " + line + ").</p>";
                };
                out.writeBytes(html.getBytes(StandardCharsets.US_ASCII));
            }
            else
            {
                // High bytes first, so no line reads as an SSE field or comment; CR and LF are never produced.
                for (int i = 0; i < 40; i++)
                    out.write(0x80 | ((line * 31 + i * 7) & 0x7F));
            }
            out.write('\n');
        }
        return out.toByteArray();
    }

    /** The whole body with a {@code content-length} of only {@code declared}; the rest follows on the connection. */
    private void shortLength(byte[] body, int declared, HttpField contentType)
    {
        int n = Math.min(declared, body.length);
        response.setStatus(HttpStatus.OK_200);
        response.getHeaders().put(contentType);
        response.getHeaders().put(HttpHeader.CONTENT_LENGTH, n);
        lastWriteStarted = true;
        ConnectionMetaData connection = request.getConnectionMetaData();
        if (connection.getHttpVersion().getVersion() >= 20 || n == body.length)
        {
            response.write(true, ByteBuffer.wrap(body, 0, n), lastWrite);
            return;
        }
        // The response is complete on the wire once this write succeeded; the stray bytes go straight to the socket
        // before the handler completes, so Jetty writes nothing else on the connection meanwhile and keeps it open.
        response.write(true, ByteBuffer.wrap(body, 0, n), Callback.from(Invocable.InvocationType.NON_BLOCKING, () ->
            connection.getConnection().getEndPoint().write(lastWrite, ByteBuffer.wrap(body, n, body.length - n)),
            this::clientFailed));
    }

    /** Writes {@code body} one byte per write, then completes. */
    private void trickle(byte[] body, HttpField contentType)
    {
        response.setStatus(HttpStatus.OK_200);
        response.getHeaders().put(contentType);
        new Trickle(body).iterate();
    }

    /** One byte per write: HTTP/1.1 sends each as its own chunk, HTTP/2 as its own DATA frame. */
    private final class Trickle extends org.eclipse.jetty.util.IteratingCallback
    {
        private final byte[] bytes;
        private int next;

        private Trickle(byte[] bytes)
        {
            this.bytes = bytes;
        }

        @Override
        protected Action process()
        {
            if (!isResponding())
                return Action.SUCCEEDED;
            if (next == bytes.length - 1)
            {
                lastWriteStarted = true;
                response.write(true, ByteBuffer.wrap(bytes, next++, 1), lastWrite);
                return Action.SUCCEEDED;
            }
            if (next >= bytes.length)
                return Action.SUCCEEDED;
            response.write(false, ByteBuffer.wrap(bytes, next++, 1), this);
            return Action.SCHEDULED;
        }

        @Override
        protected void onCompleteFailure(Throwable cause)
        {
            clientFailed(cause);
        }

        @Override
        public InvocationType getInvocationType()
        {
            return InvocationType.NON_BLOCKING;
        }
    }

    /** {@link MockModels#HUGE_HEADER}'s value, built once. */
    private static final class HugeHeader
    {
        static final String VALUE = "a".repeat(MockModels.HUGE_HEADER_BYTES);
    }

    private void writeError(DialectTemplates templates, ErrorReply reply, long id)
    {
        if (reply.retryAfter())
            response.getHeaders().put(RETRY_AFTER);
        String requestIdHeader = templates.requestIdHeader();
        if (requestIdHeader != null)
            response.getHeaders().put(requestIdHeader, REQUEST_ID_PREFIX + id);
        writeLast(reply.status(), reply.body().bytes(Template.Values.ofId(id)), templates.jsonContentType());
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

    private RecordedRequest record(String method, String path, byte[] body, MockDialect dialect, String model,
                                   boolean stream)
    {
        List<RecordedRequest.Header> headers = new ArrayList<>(request.getHeaders().size());
        for (HttpField field : request.getHeaders())
            headers.add(new RecordedRequest.Header(field.getName(), field.getValue()));
        ConnectionMetaData connection = request.getConnectionMetaData();
        long begin = request.getBeginNanoTime();
        Instant arrivedAt = Instant.now().minusNanos(Math.max(0, System.nanoTime() - begin));
        return new RecordedRequest(method, path, request.getHttpURI().getQuery(), headers, body,
            connection.getHttpVersion().asString(), connection.getProtocol(), dialect, model, stream, arrivedAt, begin);
    }

    private byte[] stats()
    {
        Recorder recorder = handler.recorder();
        return ("{\"requests\":" + recorder.requestCount() + ",\"aborted\":" + recorder.abortedCount() + "}")
            .getBytes(StandardCharsets.UTF_8);
    }

    @Override
    public String toString()
    {
        return "MockExchange@" + Integer.toHexString(hashCode()) + "[" + request.getMethod() + " " +
            request.getHttpURI().getPath() + ", state=" + state.get() + "]";
    }

    /**
     * Reads a request body into one array, up to the largest the mock accepts, and hands it to {@link #onBody}; a
     * failed read or a body too large fails the exchange. Not {@code Content.Source.asRetainableByteBuffer}: Jetty
     * 12.1's keeps the chunks it gathered when the read fails (a body that stalls past the idle timeout), and their
     * pooled buffers never go back.
     */
    private final class BodyReader implements Runnable
    {
        private final Content.Source source;
        private final int maxBody;
        private byte[] bytes;
        private int length;

        private BodyReader(Content.Source source, int maxBody, long declared)
        {
            this.source = source;
            this.maxBody = maxBody;
            this.bytes = new byte[(int)Math.min(maxBody, declared >= 0 ? declared : 1024)];
        }

        @Override
        public void run()
        {
            while (true)
            {
                Content.Chunk chunk = source.read();
                if (chunk == null)
                {
                    source.demand(this);
                    return;
                }
                if (Content.Chunk.isFailure(chunk))
                {
                    if (!chunk.isLast())
                        source.fail(chunk.getFailure());
                    fail(chunk.getFailure(), false);
                    return;
                }
                ByteBuffer data = chunk.getByteBuffer();
                int n = data.remaining();
                if (n > maxBody - length)
                {
                    chunk.release();
                    BadMessageException tooLarge = new BadMessageException(HttpStatus.PAYLOAD_TOO_LARGE_413,
                        "request body larger than " + maxBody + " bytes");
                    source.fail(tooLarge);
                    fail(tooLarge, false);
                    return;
                }
                if (n > bytes.length - length)
                    bytes = Arrays.copyOf(bytes, (int)Math.min(maxBody, Math.max(length + n, 2L * bytes.length)));
                data.get(bytes, length, n);
                length += n;
                boolean last = chunk.isLast();
                chunk.release();
                if (last)
                {
                    onBody(ByteBuffer.wrap(bytes, 0, length));
                    return;
                }
            }
        }
    }

    /** A request's content with one chunk, already read, put back in front. */
    private static final class Unread implements Content.Source
    {
        private final Content.Source source;
        private Content.Chunk first;

        private Unread(Content.Source source, Content.Chunk first)
        {
            this.source = source;
            this.first = first;
        }

        @Override
        public Content.Chunk read()
        {
            Content.Chunk chunk = first;
            if (chunk == null)
                return source.read();
            // A failure chunk stays, as a source's failure does; any other is handed over once.
            if (!Content.Chunk.isFailure(chunk))
                first = null;
            return chunk;
        }

        @Override
        public void demand(Runnable demandCallback)
        {
            if (first != null)
                demandCallback.run();
            else
                source.demand(demandCallback);
        }

        @Override
        public void fail(Throwable failure)
        {
            Content.Chunk chunk = first;
            if (chunk != null && !Content.Chunk.isFailure(chunk))
            {
                first = null;
                chunk.release();
            }
            source.fail(failure);
        }

        @Override
        public long getLength()
        {
            return source.getLength();
        }
    }

    /**
     * What the mock needs from a chat request of any dialect, found by one pass of Jackson's streaming parser (no
     * tree).
     *
     * @param model the top-level {@code model}, or {@code null} when absent or not a string (Gemini names the model
     * in the path instead)
     * @param stream the top-level {@code stream} flag (OpenAI, Anthropic)
     * @param includeUsage {@code stream_options.include_usage} (OpenAI)
     * @param fields which of the fields some dialect requires are present: {@link #MESSAGES}, {@link #MAX_TOKENS},
     * {@link #MAX_TOKENS_INTEGER}, {@link #CONTENTS}, {@link #GENERATE_CONTENT_REQUEST}
     * @param malformed whether the body is not one JSON object
     */
    record ChatRequest(String model, boolean stream, boolean includeUsage, int fields, boolean malformed)
    {
        /** A non-null {@code messages}. */
        static final int MESSAGES = 1;
        /** A {@code max_tokens}, of any type. */
        static final int MAX_TOKENS = 2;
        /** A {@code max_tokens} that is an integer. */
        static final int MAX_TOKENS_INTEGER = 4;
        /** A non-null {@code contents}. */
        static final int CONTENTS = 8;
        /** A non-null {@code generateContentRequest} (a Gemini count's). */
        static final int GENERATE_CONTENT_REQUEST = 16;

        private static final ChatRequest MALFORMED = new ChatRequest(null, false, false, 0, true);

        boolean has(int field)
        {
            return (fields & field) == field;
        }

        static ChatRequest scan(MockHandler handler, byte[] body, int offset, int length)
        {
            try (JsonParser parser = handler.jsonFactory().createParser(body, offset, length))
            {
                if (parser.nextToken() != JsonToken.START_OBJECT)
                    return MALFORMED;
                String model = null;
                boolean stream = false;
                boolean includeUsage = false;
                int fields = 0;
                JsonToken token;
                while ((token = parser.nextToken()) == JsonToken.FIELD_NAME)
                {
                    String name = parser.currentName();
                    token = parser.nextToken();
                    switch (name)
                    {
                        case "model" ->
                        {
                            // A model that is not a string is no model: 400, as at the providers.
                            if (token == JsonToken.VALUE_STRING)
                                model = parser.getText();
                            else
                                parser.skipChildren();
                        }
                        case "stream" -> stream = token == JsonToken.VALUE_TRUE;
                        case "stream_options" -> includeUsage = token == JsonToken.START_OBJECT && includeUsage(parser);
                        case "messages" -> fields |= present(parser, token, MESSAGES);
                        case "contents" -> fields |= present(parser, token, CONTENTS);
                        case "generateContentRequest", "generate_content_request" ->
                            fields |= present(parser, token, GENERATE_CONTENT_REQUEST);
                        case "max_tokens" -> fields |= present(parser, token,
                            token == JsonToken.VALUE_NUMBER_INT ? MAX_TOKENS | MAX_TOKENS_INTEGER : MAX_TOKENS);
                        default -> parser.skipChildren();
                    }
                }
                // The whole body is tokenized, so a truncated or trailing-garbage body is a 400 like at the providers.
                if (token != JsonToken.END_OBJECT || parser.nextToken() != null)
                    return MALFORMED;
                return new ChatRequest(model, stream, includeUsage, fields, false);
            }
            catch (IOException x)
            {
                return MALFORMED;
            }
        }

        private static int present(JsonParser parser, JsonToken value, int field) throws IOException
        {
            parser.skipChildren();
            // A null max_tokens is there but no integer; a null list is no list.
            return value == JsonToken.VALUE_NULL ? field & MAX_TOKENS : field;
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
