package dev.sluice.plugin.log;

import dev.sluice.api.exchange.Exchange.Stage;
import dev.sluice.api.testing.TestCompletion;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** Rotation by size and by time, the names of rotated files and {@code keep}. */
class LogWriterTest
{
    private static final long T0 = Instant.parse("2026-12-01T22:59:59.500Z").toEpochMilli();

    @TempDir
    Path dir;

    private static LogRecord record(String id)
    {
        TestCompletion c = new TestCompletion();
        c.id = id;
        c.at(Stage.RESPONSE_END, 10);
        return LogRecord.of(c, false, 0, null);
    }

    private List<String> allLines() throws Exception
    {
        List<String> lines = new ArrayList<>();
        try (var files = Files.list(dir))
        {
            for (Path f : files.sorted().toList())
                lines.addAll(Files.readAllLines(f, StandardCharsets.UTF_8));
        }
        return lines;
    }

    @Test
    void sizeRotationKeepsEveryFileUnderTheLimitAndEveryLineSomewhere() throws Exception
    {
        Path file = dir.resolve("requests.jsonl");
        LogWriter writer = new LogWriter(file, 2_000, 0, 100, 0);
        writer.open(T0);
        for (int i = 0; i < 50; i++)
            writer.write(record("r" + i), T0);
        writer.close();

        List<LogWriter.Rotated> rotated = writer.rotatedFiles(dir);
        assertThat(rotated).hasSizeGreaterThan(3);
        assertThat(writer.rotations()).isEqualTo(rotated.size());
        for (LogWriter.Rotated r : rotated)
        {
            assertThat(Files.size(r.file())).isLessThanOrEqualTo(2_000).isPositive();
            assertThat(r.file().getFileName().toString()).startsWith("requests.20261201T225959.500Z").endsWith(".jsonl");
        }
        assertThat(Files.size(file)).isLessThanOrEqualTo(2_000);
        // Rotated within one millisecond: the index orders them.
        assertThat(rotated.get(0).file().getFileName().toString()).isEqualTo("requests.20261201T225959.500Z.jsonl");
        assertThat(rotated.get(1).file().getFileName().toString()).isEqualTo("requests.20261201T225959.500Z-1.jsonl");
        List<String> ids = new ArrayList<>();
        for (LogWriter.Rotated r : rotated)
            Files.readAllLines(r.file()).forEach(l -> ids.add(l.replaceAll(".*\"id\":\"(r\\d+)\".*", "$1")));
        Files.readAllLines(file).forEach(l -> ids.add(l.replaceAll(".*\"id\":\"(r\\d+)\".*", "$1")));
        List<String> expected = new ArrayList<>();
        for (int i = 0; i < 50; i++)
            expected.add("r" + i);
        assertThat(ids).as("every line once, in order, across the files").isEqualTo(expected);
    }

    @Test
    void keepDeletesTheOldestRotatedFiles() throws Exception
    {
        Path file = dir.resolve("requests.jsonl");
        Files.writeString(dir.resolve("other.20200101T000000.000Z.jsonl"), "not ours\n");
        LogWriter writer = new LogWriter(file, 1_000, 0, 2, 0);
        writer.open(T0);
        for (int i = 0; i < 60; i++)
            writer.write(record("r" + i), T0 + i * 1_000L);
        writer.close();

        List<LogWriter.Rotated> rotated = writer.rotatedFiles(dir);
        assertThat(rotated).hasSize(2);
        assertThat(writer.rotations()).isGreaterThan(2);
        assertThat(dir.resolve("other.20200101T000000.000Z.jsonl")).as("another log's file").exists();
        // The newest two remain: the last lines are in them and in the current file.
        assertThat(Files.readString(file) + Files.readString(rotated.get(1).file())).contains("\"id\":\"r59\"");
    }

    @Test
    void timeRotationHappensAtTheFirstDrainAfterEachBoundaryAndNeverForAnEmptyFile() throws Exception
    {
        Path file = dir.resolve("requests.jsonl");
        LogWriter writer = new LogWriter(file, 0, 3_600_000, 10, 0);
        writer.open(T0);
        writer.write(record("before"), T0);
        assertThat(writer.rotationDue(T0 + 499)).isFalse();
        assertThat(writer.rotationDue(T0 + 500)).as("23:00:00.000, the hour").isTrue();
        writer.rotateIfDue(T0 + 600);
        writer.write(record("after"), T0 + 600);
        // The next boundary rotates "after" away; the one after that finds an empty file and keeps it.
        writer.rotateIfDue(T0 + 600 + 3_600_000L);
        writer.rotateIfDue(T0 + 600 + 7_200_000L);
        writer.close();

        List<LogWriter.Rotated> rotated = writer.rotatedFiles(dir);
        assertThat(rotated).hasSize(2);
        assertThat(rotated.get(0).file().getFileName().toString()).isEqualTo("requests.20261201T230000.100Z.jsonl");
        assertThat(Files.readString(rotated.get(0).file())).contains("\"id\":\"before\"");
        assertThat(Files.readString(rotated.get(1).file())).contains("\"id\":\"after\"");
        assertThat(Files.size(file)).isZero();
        assertThat(allLines()).hasSize(2);
    }

    @Test
    void anExistingFileIsAppendedToAndCountsTowardsItsSize() throws Exception
    {
        Path file = dir.resolve("requests");
        Files.writeString(file, "x".repeat(990) + "\n");
        LogWriter writer = new LogWriter(file, 1_000, 0, 10, 0);
        writer.open(T0);
        assertThat(writer.size()).isEqualTo(991);
        writer.write(record("r"), T0);
        writer.close();
        assertThat(writer.rotatedFiles(dir)).singleElement()
            .satisfies(r -> assertThat(r.file().getFileName().toString()).isEqualTo("requests.20261201T225959.500Z"));
        assertThat(Files.readString(file)).contains("\"id\":\"r\"");
    }

    @Test
    void timesAreUtcWithThreeFractionDigits()
    {
        LogWriter writer = new LogWriter(dir.resolve("x.log"), 0, 0, 1, 0);
        assertThat(writer.time(Instant.parse("2026-01-02T03:04:05Z").toEpochMilli())).isEqualTo("2026-01-02T03:04:05.000Z");
        assertThat(writer.time(Instant.parse("2026-01-02T03:04:05.007Z").toEpochMilli())).isEqualTo("2026-01-02T03:04:05.007Z");
        assertThat(writer.time(Instant.parse("2026-01-02T03:04:05.070Z").toEpochMilli())).isEqualTo("2026-01-02T03:04:05.070Z");
        assertThat(writer.time(Instant.parse("2026-01-02T03:04:06.999Z").toEpochMilli())).isEqualTo("2026-01-02T03:04:06.999Z");
    }
}
