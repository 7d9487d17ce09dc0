package dev.sluice.mock;

import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicLong;

import com.fasterxml.jackson.core.JsonFactory;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.BufferUtil;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.thread.Scheduler;

/**
 * The mock's only handler: every request becomes a {@link MockExchange}, which reads the body without blocking and
 * answers by model name.
 *
 * <p>Never blocks: bodies are read as their chunks arrive (on demand), delays are scheduler tasks, stream events are
 * chained from write callbacks.</p>
 */
final class MockHandler extends Handler.Abstract.NonBlocking
{
    // The S2-large cell's 100 KB prompts are worth it too: comparing them costs far less than scanning them.
    private static final int MAX_SCAN_CACHE_BYTES = 1 << 20;

    private final MockProvider.Settings settings;
    private final DialectTemplates[] templates;
    private final Recorder recorder;
    private final JsonFactory jsonFactory = new JsonFactory();
    private final AtomicLong ids = new AtomicLong();
    private volatile boolean stopping;
    // One entry each: the bench's traffic repeats one request; tests' varied requests just replace the entry.
    private volatile ScannedBody lastScan;
    private volatile QuotedModel lastModel;

    MockHandler(MockProvider.Settings settings, Recorder recorder)
    {
        this.settings = settings;
        // Indexed by MockDialect ordinal; each renders the configured text once, here.
        this.templates = new DialectTemplates[]{
            new OpenAiTemplates(settings.text(), settings.events()),
            new AnthropicTemplates(settings.text(), settings.events()),
            new ResponsesTemplates(settings.text(), settings.events()),
            new GeminiTemplates(settings.text(), settings.events())
        };
        this.recorder = recorder;
    }

    @Override
    public boolean handle(Request request, Response response, Callback callback)
    {
        new MockExchange(this, request, response, callback).start();
        return true;
    }

    MockProvider.Settings settings()
    {
        return settings;
    }

    DialectTemplates templates(MockDialect dialect)
    {
        return templates[dialect.ordinal()];
    }

    Recorder recorder()
    {
        return recorder;
    }

    JsonFactory jsonFactory()
    {
        return jsonFactory;
    }

    Scheduler scheduler()
    {
        return getServer().getScheduler();
    }

    /**
     * Scans a chat request's body, or returns the scan of the previous body when the bytes are the same: a bench
     * sends one body over and over, and comparing bytes (in place, even in a direct buffer) costs a fraction of
     * copying and tokenizing them. The result is a pure function of the bytes, so nothing observable changes.
     *
     * @param body the body; its position is left untouched
     * @return what the body says
     */
    MockExchange.ChatRequest scan(ByteBuffer body)
    {
        int length = body.remaining();
        ScannedBody last = lastScan;
        if (last != null && last.body().length == length && body.mismatch(ByteBuffer.wrap(last.body())) < 0)
            return last.request();
        byte[] bytes = BufferUtil.toArray(body);
        MockExchange.ChatRequest request = MockExchange.ChatRequest.scan(this, bytes, 0, length);
        if (length <= MAX_SCAN_CACHE_BYTES)
            lastScan = new ScannedBody(bytes, request);
        return request;
    }

    /**
     * @param model a model name
     * @return it JSON-quoted as UTF-8, shared with the previous request that named the same model; nobody may
     * modify it
     */
    byte[] quote(String model)
    {
        QuotedModel last = lastModel;
        if (last != null && last.model().equals(model))
            return last.quoted();
        byte[] quoted = Template.quoteUtf8(model);
        lastModel = new QuotedModel(model, quoted);
        return quoted;
    }

    long nextId()
    {
        return ids.incrementAndGet();
    }

    boolean stopping()
    {
        return stopping;
    }

    /** Marks that the server is (again) serving: failures from now on may be client aborts. */
    void beginStart()
    {
        stopping = false;
    }

    /** Marks that the server is going down before Jetty fails what is in flight: those failures are not client aborts. */
    void beginStop()
    {
        stopping = true;
    }

    /** A body and its scan. */
    private record ScannedBody(byte[] body, MockExchange.ChatRequest request)
    {
    }

    /** A model and its JSON-quoted UTF-8 bytes. */
    private record QuotedModel(String model, byte[] quoted)
    {
    }
}
