package dev.sluice.plugin.otel;

import dev.sluice.api.binding.BindingContext.Scheduler;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.sdk.common.CompletableResultCode;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SpanExporter;
import io.opentelemetry.sdk.trace.samplers.Sampler;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The export queue with the SDK's real spans and a stand-in for the OTLP exporter (an OpenTelemetry interface, not
 * ours), the runtime's executor and scheduler replaced by hand-run queues: what is dropped, what one drain exports,
 * that a second export never starts while one is in flight, and what {@code close} flushes.
 */
class ExportQueueTest
{
    /** Records batches; each export stays pending until the test completes it. */
    private static final class PendingExporter implements SpanExporter
    {
        final List<List<SpanData>> batches = new ArrayList<>();
        final List<CompletableResultCode> results = new ArrayList<>();
        boolean completeAtOnce;
        boolean shutdown;

        @Override
        public CompletableResultCode export(Collection<SpanData> spans)
        {
            batches.add(List.copyOf(spans));
            CompletableResultCode result = completeAtOnce ? CompletableResultCode.ofSuccess() : new CompletableResultCode();
            results.add(result);
            return result;
        }

        @Override
        public CompletableResultCode flush()
        {
            return CompletableResultCode.ofSuccess();
        }

        @Override
        public CompletableResultCode shutdown()
        {
            shutdown = true;
            return CompletableResultCode.ofSuccess();
        }
    }

    /** The scheduler's one periodic task, run by the test. */
    private static final class ManualScheduler implements Scheduler
    {
        Runnable tick;
        boolean cancelled;

        @Override
        public Task schedule(Runnable task, Duration delay)
        {
            throw new AssertionError("the queue schedules one periodic task");
        }

        @Override
        public Task scheduleWithFixedDelay(Runnable task, Duration initialDelay, Duration delay)
        {
            tick = task;
            return () ->
            {
                cancelled = true;
                return true;
            };
        }
    }

    private final PendingExporter exporter = new PendingExporter();
    private final ArrayDeque<Runnable> executor = new ArrayDeque<>();
    private final ManualScheduler scheduler = new ManualScheduler();

    private ExportQueue queue(int capacity, int maxBatch)
    {
        ExportQueue queue = new ExportQueue("test", exporter, executor::add, capacity, maxBatch);
        queue.start(scheduler, Duration.ofSeconds(1));
        return queue;
    }

    private static Tracer tracer(ExportQueue queue)
    {
        return SdkTracerProvider.builder().setSampler(Sampler.alwaysOn()).addSpanProcessor(queue).build().get("test");
    }

    private static void end(Tracer tracer, int spans)
    {
        for (int i = 0; i < spans; i++)
            tracer.spanBuilder("span " + i).startSpan().end();
    }

    @Test
    void aFullQueueDropsAndCountsAndOneExportIsInFlightAtATime()
    {
        ExportQueue queue = queue(3, 2);
        Tracer tracer = tracer(queue);

        end(tracer, 4);
        assertThat(queue.dropped()).as("the fourth span found the queue full").isEqualTo(1);
        scheduler.tick.run();
        assertThat(executor).as("one drain handed to the executor").hasSize(1);
        executor.poll().run();
        assertThat(exporter.batches).hasSize(1);
        assertThat(exporter.batches.get(0)).extracting(SpanData::getName).containsExactly("span 0", "span 1");

        scheduler.tick.run();
        assertThat(executor).as("no second export while the first is in flight").isEmpty();

        exporter.results.get(0).succeed();
        assertThat(queue.exported()).isEqualTo(2);
        scheduler.tick.run();
        executor.poll().run();
        assertThat(exporter.batches.get(1)).extracting(SpanData::getName).containsExactly("span 2");
        exporter.results.get(1).fail();
        assertThat(queue.failed()).isEqualTo(1);
        scheduler.tick.run();
        assertThat(executor).as("an empty queue hands nothing to the executor").isEmpty();
    }

    @Test
    void closeExportsWhatIsQueuedAndShutsTheExporterDown()
    {
        ExportQueue queue = queue(10, 4);
        Tracer tracer = tracer(queue);
        end(tracer, 5);
        exporter.completeAtOnce = true;

        queue.close(Duration.ofSeconds(1));

        assertThat(scheduler.cancelled).isTrue();
        assertThat(exporter.batches).extracting(List::size).containsExactly(4, 1);
        assertThat(queue.exported()).isEqualTo(5);
        assertThat(exporter.shutdown).isTrue();
        end(tracer, 1);
        assertThat(queue.dropped()).as("a span ended after close is ignored, not queued").isZero();
    }
}
