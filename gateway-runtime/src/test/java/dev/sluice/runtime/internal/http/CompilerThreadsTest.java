package dev.sluice.runtime.internal.http;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

class CompilerThreadsTest
{
    @TempDir
    Path dir;

    private void task(String id, String comm) throws IOException
    {
        Path task = Files.createDirectories(dir.resolve(id));
        if (comm != null)
            Files.writeString(task.resolve("comm"), comm + "\n");
    }

    @Test
    void findsTheC2CompilerThreadsByTheNameLinuxKeeps() throws IOException
    {
        task("101", "java");
        task("140", "C2 CompilerThre");
        task("141", "C1 CompilerThre");
        task("142", "C2 CompilerThre");
        task("150", "sluice-14");
        task("151", "VM Thread");
        task("152", null); // ended between the listing and the read

        assertThat(CompilerThreads.find(dir)).containsExactlyInAnyOrder("140", "142");
        assertThat(CompilerThreads.find(dir.resolve("no-such-folder"))).isEmpty();
    }

    @Test
    void findsThisJvmsC2CompilerThreads() throws IOException
    {
        Path tasks = Path.of("/proc/self/task");
        assumeTrue(Files.isDirectory(tasks), "Linux only");
        assumeTrue(ManagementFactory.getCompilationMXBean() != null, "a JVM with a JIT");

        List<String> ids = CompilerThreads.find(tasks);

        assertThat(ids).isNotEmpty();
        for (String id : ids)
            assertThat(Files.readString(tasks.resolve(id).resolve("comm"))).startsWith("C2 CompilerThre");
    }
}
