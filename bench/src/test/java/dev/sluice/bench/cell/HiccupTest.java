package dev.sluice.bench.cell;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** {@link Hiccup} on a real child process: stopped while stalled, running again after, each stall as long as asked. */
@Timeout(60)
class HiccupTest
{
    private static char state(long pid) throws Exception
    {
        String stat = Files.readString(Path.of("/proc/" + pid + "/stat"));
        return stat.charAt(stat.lastIndexOf(')') + 2);
    }

    @Test
    void stopsAndResumesTheProcess() throws Exception
    {
        Process sleeper = new ProcessBuilder("sleep", "30").start();
        ExecutorService exec = Executors.newSingleThreadExecutor();
        try
        {
            long pid = sleeper.pid();
            long origin = System.nanoTime();
            Future<List<Hiccup.Done>> run = exec.submit(() -> Hiccup.run(pid, () -> origin,
                List.of(new Hiccup.Stall(100, 300), new Hiccup.Stall(600, 200)), 1_000));
            boolean sawStopped = false;
            while (!run.isDone())
            {
                sawStopped |= state(pid) == 'T';
                Thread.sleep(5);
            }
            List<Hiccup.Done> done = run.get(10, TimeUnit.SECONDS);
            assertThat(sawStopped).isTrue();
            assertThat(state(pid)).isNotEqualTo('T');
            assertThat(done).hasSize(2);
            assertThat(done.get(0).stoppedMillis()).isGreaterThanOrEqualTo(100);
            assertThat(done.get(0).millis()).isGreaterThanOrEqualTo(300);
            assertThat(done.get(1).stoppedMillis()).isGreaterThanOrEqualTo(600);
            assertThat(done.get(1).millis()).isGreaterThanOrEqualTo(200);
        }
        finally
        {
            exec.shutdownNow();
            sleeper.destroyForcibly();
        }
    }

    @Test
    void aRunThatNeverStartsIsReported()
    {
        assertThatThrownBy(() -> Hiccup.run(ProcessHandle.current().pid(), () -> null, List.of(new Hiccup.Stall(0, 1)), 50))
            .hasMessageContaining("did not reach its window");
    }

    @Test
    void aMissingProcessIsReported()
    {
        assertThatThrownBy(() -> Hiccup.run(Integer.MAX_VALUE, System::nanoTime, List.of(new Hiccup.Stall(0, 1)), 50))
            .hasMessageContaining("kill -STOP");
    }
}
