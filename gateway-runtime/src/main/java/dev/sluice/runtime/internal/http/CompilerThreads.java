package dev.sluice.runtime.internal.http;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * Puts the JVM's C2 compiler threads on Linux's {@code SCHED_IDLE} scheduling policy on a JVM with one processor, some
 * seconds after a warm-up has compiled the request path ({@link Warmup#COMPILERS_KEEP_PRIORITY}). There a compiler
 * thread and the threads that serve requests share the core: at nice 5 (the shipped flags) a compiler thread gets a
 * smaller share of it, but a request thread that wakes up can still wait for the rest of the compiler's time slice, and
 * the compilations a load change brings (a burst after a pause opens connections and fills queues the warm-up seldom
 * did) put milliseconds into the latency of the requests that wait behind them. Nearly all of that compilation time is
 * C2's (on a cold gateway's first ten seconds at 1,000 req/s, 4 s of C2 against 60 ms of C1). A thread on {@code
 * SCHED_IDLE} runs when nothing else on the core wants to, and the kernel preempts it as soon as a thread of any other
 * policy wakes up: C2 gets the core's idle time, which a gateway below saturation has, and requests do not wait for it.
 *
 * <p>C1 keeps nice 5. Code that was never compiled (a path the warm-up did not take) runs in the interpreter, several
 * times slower, until C1 compiles it; if that saturates the core, a C1 on {@code SCHED_IDLE} would get next to nothing
 * (the kernel's weight for the policy is 3 against 1,024 for nice 0) and the interpreted code would keep the core
 * saturated. C1's compilations are short, so at nice 5 it costs the requests little; C2 then replaces its code in the
 * idle time. Code C2 compiled and then threw away (a branch its profile never saw is taken) goes back to C2, not C1,
 * and runs in the interpreter until C2 has idle time; the warm-up is built to leave little of that for ready, and C2
 * keeps nice 5 for the first seconds after it, when real traffic brings the rest.
 *
 * <p>The policy is set with {@code chrt} (util-linux), one short process per C2 thread, from a start-up thread.
 * With one processor HotSpot runs one compiler thread of each kind; a larger {@code -XX:CICompilerCount} lets it add
 * threads later, which take the policy of the compiler thread that starts them, of either kind. Without {@code chrt},
 * on another system or with more processors, nothing changes and the compilers keep their nice value.
 */
final class CompilerThreads
{
    private static final Logger LOG = LoggerFactory.getLogger(CompilerThreads.class);
    /** What Linux keeps of the name of a HotSpot C2 compiler thread ("C2 CompilerThread0"). */
    static final String C2 = "C2 CompilerThre";
    private static final long CHRT_TIMEOUT_MILLIS = 2_000;

    private CompilerThreads()
    {
    }

    /**
     * @param tasks the process's task folder ({@code /proc/self/task})
     * @return the ids of the threads whose name is a C2 compiler thread's, in the order listed; empty when there is no
     *         such folder
     */
    static List<String> find(Path tasks) throws IOException
    {
        List<String> ids = new ArrayList<>();
        if (!Files.isDirectory(tasks))
            return ids;
        try (Stream<Path> list = Files.list(tasks))
        {
            for (Path task : list.toList())
            {
                String name;
                try
                {
                    name = Files.readString(task.resolve("comm")).strip();
                }
                catch (NoSuchFileException ended)
                {
                    continue; // a thread that ended since the listing
                }
                if (name.startsWith(C2))
                    ids.add(task.getFileName().toString());
            }
        }
        return ids;
    }

    /**
     * Puts this JVM's C2 compiler threads on {@code SCHED_IDLE} when it has one processor. Blocks for the few milliseconds
     * {@code chrt} takes: call it from a start-up thread.
     *
     * @return how many threads were moved
     */
    static int idleWhenAlone()
    {
        if (!Warmup.oneProcessor())
            return 0;
        try
        {
            int moved = 0;
            List<String> ids = find(Path.of("/proc/self/task"));
            for (String id : ids)
            {
                if (chrtIdle(id))
                    moved++;
            }
            if (moved > 0)
                LOG.info("C2 compiler threads on SCHED_IDLE ({} of {}): with one processor they now run only when no request"
                    + " thread wants it; C1 keeps its priority", moved, ids.size());
            else if (!ids.isEmpty())
                LOG.info("C2 compiler threads left at their priority: chrt could not set SCHED_IDLE");
            return moved;
        }
        catch (IOException e)
        {
            LOG.info("C2 compiler threads left at their priority: {}", e.toString());
            return 0;
        }
    }

    private static boolean chrtIdle(String threadId)
    {
        Process chrt;
        try
        {
            chrt = new ProcessBuilder("chrt", "--idle", "--pid", "0", threadId).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        }
        catch (IOException noChrt)
        {
            return false;
        }
        try
        {
            if (!chrt.waitFor(CHRT_TIMEOUT_MILLIS, TimeUnit.MILLISECONDS))
            {
                chrt.destroyForcibly();
                return false;
            }
            return chrt.exitValue() == 0;
        }
        catch (InterruptedException e)
        {
            Thread.currentThread().interrupt();
            chrt.destroyForcibly();
            return false;
        }
    }
}
