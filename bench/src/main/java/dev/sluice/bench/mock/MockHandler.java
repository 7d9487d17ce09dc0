package dev.sluice.bench.mock;

import java.util.concurrent.atomic.AtomicLong;

import com.fasterxml.jackson.core.JsonFactory;
import org.eclipse.jetty.io.ByteBufferPool;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.thread.Scheduler;

/**
 * The mock's only handler: every request becomes a {@link MockExchange}, which reads the body without blocking and
 * answers by model name.
 *
 * <p>Never blocks: bodies are read with {@code Content.Source.asRetainableByteBuffer}, delays are scheduler tasks,
 * stream events are chained from write callbacks.</p>
 */
final class MockHandler extends Handler.Abstract.NonBlocking
{
    private final MockProvider.Settings settings;
    private final DialectTemplates[] templates;
    private final Recorder recorder;
    private final JsonFactory jsonFactory = new JsonFactory();
    private final AtomicLong ids = new AtomicLong();
    private volatile boolean stopping;

    MockHandler(MockProvider.Settings settings, Recorder recorder)
    {
        this.settings = settings;
        // Indexed by MockDialect ordinal; each renders the configured text once, here.
        this.templates = new DialectTemplates[]{
            new OpenAiTemplates(settings.text(), settings.events()),
            new AnthropicTemplates(settings.text(), settings.events()),
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

    ByteBufferPool byteBufferPool()
    {
        return getServer().getByteBufferPool();
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
}
