package dev.sluice.plugin.metrics;

import dev.sluice.api.ErrorKind;
import dev.sluice.api.binding.BindingConfig;
import dev.sluice.api.binding.BindingConfig.BindingKind;
import dev.sluice.api.exchange.Attributes;
import dev.sluice.api.exchange.Completion.CompletionListener;
import dev.sluice.api.exchange.Exchange.Stage;
import dev.sluice.support.json.Json;
import dev.sluice.api.model.Usage;
import dev.sluice.api.testing.TestAttempt;
import dev.sluice.api.testing.TestBindingContext;
import dev.sluice.api.testing.TestCompletion;
import dev.sluice.api.testing.TestExchange;
import org.junit.jupiter.api.Test;

import java.lang.management.ManagementFactory;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What one completion costs the thread that finished the exchange: the listener on a mix of answers, streams and
 * errors over a few label combinations. Allocation is asserted (it is behaviour: the hot path allocates nothing once
 * each combination has been seen); the time is printed, never asserted.
 */
class MetricsListenerCostTest
{
    @Test
    void aCompletionAllocatesNothingOnceItsLabelsAreKnown() throws Exception
    {
        TestBindingContext context = new TestBindingContext("next");
        context.advertisedModels("demo");
        new MetricsFactory().create(new BindingConfig("m", "metrics", BindingKind.PROXY,
            Json.MAPPER.readTree("{\"models\":[\"gpt-*\"],\"jvm\":false}"), "next", List.of()), context);
        CompletionListener listener = context.completionListeners().get(0);
        TestCompletion[] mix = mix();

        com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean)ManagementFactory.getThreadMXBean();
        long thread = Thread.currentThread().getId();
        // Warm-up: every label combination seen, the listener compiled.
        for (int i = 0; i < 500_000; i++)
            listener.completed(mix[i % mix.length]);

        // Until the JIT has compiled the library's histogram code with escape analysis, an observation allocates a
        // 16-byte AtomicBoolean (Histogram.DataPoint.maybeResetOrScaleDown): a round run before that allocates, so the
        // best of a few rounds is what compiled code does.
        int n = 200_000;
        long bestBytes = Long.MAX_VALUE;
        long bestNanos = 0;
        for (int round = 0; round < 10 && bestBytes > 0; round++)
        {
            long bytesBefore = threads.getThreadAllocatedBytes(thread);
            long start = System.nanoTime();
            for (int i = 0; i < n; i++)
                listener.completed(mix[i % mix.length]);
            long nanos = System.nanoTime() - start;
            long bytes = threads.getThreadAllocatedBytes(thread) - bytesBefore;
            if (bytes < bestBytes)
            {
                bestBytes = bytes;
                bestNanos = nanos;
            }
        }
        System.out.printf("MetricsListenerCostTest: %.0f ns per completion (mix of %d: bodies with usage, cost and cache,"
            + " streams, errors), %d bytes allocated in %d completions%n", (double)bestNanos / n, mix.length, bestBytes, n);
        String[] names = {"answer", "demo", "stream", "upstream error", "401", "made-up model", "cache hit", "no endpoint",
            "fallback"};
        for (int k = 0; k < mix.length; k++)
        {
            long bytesBefore = threads.getThreadAllocatedBytes(thread);
            long start = System.nanoTime();
            for (int i = 0; i < n; i++)
                listener.completed(mix[k]);
            long nanos = System.nanoTime() - start;
            long bytes = threads.getThreadAllocatedBytes(thread) - bytesBefore;
            System.out.printf("MetricsListenerCostTest:   %s: %.0f ns, %.2f bytes per completion%n", names[k], (double)nanos / n,
                (double)bytes / n);
        }
        assertThat(bestBytes).as("bytes allocated by %d completions", n).isLessThan(1024);
    }

    /**
     * Nine completions: answers with usage, a cost and a cache result for two models, a stream, a provider error, a
     * key refusal, a made-up model, a request no endpoint took, a fallback whose first attempt failed with tokens. The
     * answer and the stream were answered by their one attempt, as nearly all traffic is. Each model name is a String of
     * its own, as a parsed request body gives (its hash is computed once, on the first lookup, as for a real request).
     * The test exchange lists its attempts without copying them; the runtime's copies them for a fallback only.
     */
    private static TestCompletion[] mix()
    {
        TestCompletion answer = TestCompletion.served();
        answer.model = new String("gpt-4o".toCharArray());
        answer.usage = new Usage(120, 40, 64, 0, 0);
        answer.exchange = new TestExchange("gpt-4o").attempts(TestAttempt.answered(1, "south"));
        answer.exchange.attribute(Attributes.COST_USD, 0.0012);
        answer.exchange.attribute(Attributes.CACHE, "miss");

        TestCompletion demo = TestCompletion.served();
        demo.model = new String("demo".toCharArray());
        demo.usage = new Usage(12, 4, 0, 0, 0);

        TestCompletion stream = TestCompletion.served();
        stream.model = new String("gpt-4o-mini".toCharArray());
        stream.stream = true;
        stream.events = 12;
        stream.maxEventGapNanos = 250_000;
        stream.at(Stage.FIRST_EVENT, 1_020);
        stream.usage = new Usage(30, 11, 0, 0, 0);
        stream.exchange = new TestExchange("gpt-4o-mini").attempts(TestAttempt.answered(1, "south"));

        TestCompletion upstreamError = TestCompletion.served();
        upstreamError.status = 500;
        upstreamError.errorKind = ErrorKind.UPSTREAM_ERROR;

        TestCompletion refused = TestCompletion.served().noUpstream();
        refused.status = 401;
        refused.errorKind = ErrorKind.AUTHENTICATION;

        TestCompletion junk = TestCompletion.served();
        junk.model = new String("made-up-model-name".toCharArray());

        TestCompletion cacheHit = TestCompletion.served().noUpstream();
        cacheHit.exchange = new TestExchange("gpt-4o");
        cacheHit.exchange.attribute(Attributes.CACHE, "hit");

        TestCompletion noEndpoint = TestCompletion.served().noUpstream();
        noEndpoint.server = null;
        noEndpoint.model = null;
        noEndpoint.status = 404;
        noEndpoint.errorKind = ErrorKind.NOT_FOUND;

        TestCompletion fallback = TestCompletion.served();
        fallback.model = new String("gpt-4o".toCharArray());
        fallback.route = "south_b";
        fallback.usage = new Usage(120, 40, 0, 0, 0);
        TestAttempt failed = TestAttempt.failed(1, "south_a", 200, ErrorKind.UNAVAILABLE);
        failed.usage = new Usage(120, 1, 0, 0, 0);
        fallback.exchange = new TestExchange("gpt-4o").attempts(failed, TestAttempt.answered(2, "south_b"));

        return new TestCompletion[]{answer, demo, stream, upstreamError, refused, junk, cacheHit, noEndpoint, fallback};
    }
}
