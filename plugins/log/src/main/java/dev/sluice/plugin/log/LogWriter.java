package dev.sluice.plugin.log;

import dev.sluice.support.json.Json;
import com.fasterxml.jackson.core.JsonGenerator;

import java.io.BufferedOutputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.function.LongFunction;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Writes {@link LogRecord}s as JSON lines to a file (or standard output) and rotates the file by size and by time.
 * Blocking file I/O: used only by the log binding's drain task on the runtime's executor and by {@code close()}, both
 * under the binding's lock — never on a request's path. Not thread-safe.
 *
 * <p><b>Lines.</b> One long-lived {@link JsonGenerator} writes each record into a reusable in-memory line, so the
 * line's length is known before it goes to the file: a file is rotated <em>before</em> the line that would take it
 * past {@code max_bytes}, so no file exceeds it unless a single line does. Lines go to a 64 KiB
 * {@link BufferedOutputStream}; {@link #flush()} hands them to the operating system (no fsync).
 *
 * <p><b>Rotation.</b> The current file {@code requests.jsonl} is closed and renamed
 * {@code requests.<yyyyMMdd'T'HHmmss.SSS'Z'>.jsonl} (the UTC time of the rotation, {@code -N} added if that name is
 * taken), a new {@code requests.jsonl} is opened, and the rotated files beyond {@code keep}, oldest first, are deleted.
 * By size: before a line that would take the file past {@code max_bytes}. By time: at the first drain after each
 * multiple of {@code rotate_every} since the epoch (UTC). An empty file is never rotated.
 */
final class LogWriter
{
    private static final DateTimeFormatter SECOND = DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm:ss").withZone(ZoneOffset.UTC);
    private static final DateTimeFormatter ROTATED = DateTimeFormatter.ofPattern("yyyyMMdd'T'HHmmss.SSS'Z'")
        .withZone(ZoneOffset.UTC);

    private final Path path;
    private final long maxBytes;
    private final long rotateEveryMillis;
    private final int keep;
    private final int maxBody;
    private final String stem;
    private final String extension;
    private final Pattern rotatedName;
    private final Line line = new Line();
    // One function for every line: the record formats its time stamps through it, with the cached second.
    private final LongFunction<String> times = this::time;
    private JsonGenerator json;
    // Volatile: the scheduler's tick reads them, without the lock, to decide whether to ask for a drain.
    private volatile OutputStream out;
    private long size;
    private volatile long nextRotationMillis;
    private long rotations;
    // The formatted second of the last line: lines of one second share it.
    private long cachedSecond = Long.MIN_VALUE;
    private String cachedSecondText;

    /**
     * @param path              the file, or {@code null} for standard output
     * @param maxBytes          the size before rotation, 0 for none
     * @param rotateEveryMillis the period of time rotation, 0 for none
     * @param keep              rotated files kept
     * @param maxBody           the most bytes of a body written
     */
    LogWriter(Path path, long maxBytes, long rotateEveryMillis, int keep, int maxBody)
    {
        this.path = path;
        this.maxBytes = maxBytes;
        this.rotateEveryMillis = rotateEveryMillis;
        this.keep = keep;
        this.maxBody = maxBody;
        String name = path == null || path.getFileName() == null ? "" : path.getFileName().toString();
        int dot = name.lastIndexOf('.');
        this.stem = dot > 0 ? name.substring(0, dot) : name;
        this.extension = dot > 0 ? name.substring(dot) : "";
        this.rotatedName = Pattern.compile(Pattern.quote(stem) + "\\.(\\d{8}T\\d{6}\\.\\d{3}Z)(?:-(\\d+))?"
            + Pattern.quote(extension));
        this.json = newGenerator(line);
    }

    private static JsonGenerator newGenerator(OutputStream line)
    {
        try
        {
            JsonGenerator generator = Json.FACTORY.createGenerator(line);
            // Lines are separated by the '\n' written after each, not by the generator's root separator (a space).
            generator.setRootValueSeparator(null);
            return generator;
        }
        catch (IOException e)
        {
            throw new IllegalStateException("cannot create a JSON generator on memory", e);
        }
    }

    /** Opens the file for appending (creating it), or takes standard output. */
    void open(long nowMillis) throws IOException
    {
        if (path == null)
        {
            out = System.out;
            return;
        }
        OutputStream o = newStream();
        try
        {
            size = Files.size(path);
        }
        catch (IOException e)
        {
            o.close();
            throw e;
        }
        out = o;
        nextRotationMillis = nextBoundary(nowMillis);
    }

    private OutputStream newStream() throws IOException
    {
        return new BufferedOutputStream(Files.newOutputStream(path, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
            StandardOpenOption.APPEND), 1 << 16);
    }

    /** @return whether the file is open */
    boolean isOpen()
    {
        return out != null;
    }

    /** @return the current file, or {@code "-"} for standard output */
    String file()
    {
        return path == null ? LogOptions.STDOUT : path.toString();
    }

    /** @return the current file's size in bytes (0 for standard output) */
    long size()
    {
        return size;
    }

    /** @return how many rotations this writer made */
    long rotations()
    {
        return rotations;
    }

    /** @return whether time rotation is due at {@code nowMillis} */
    boolean rotationDue(long nowMillis)
    {
        return rotateEveryMillis > 0 && path != null && nowMillis >= nextRotationMillis;
    }

    /** Rotates the file if its time has come (an empty file is kept, its next boundary set). */
    void rotateIfDue(long nowMillis) throws IOException
    {
        if (!rotationDue(nowMillis))
            return;
        if (size > 0)
            rotate(nowMillis);
        nextRotationMillis = nextBoundary(nowMillis);
    }

    /**
     * Writes one line: rotating first if it would take the file past {@code max_bytes}.
     *
     * @throws IOException              the file could not be written (or rotated)
     * @throws IllegalArgumentException the record could not be written as JSON; nothing was written
     */
    void write(LogRecord record, long nowMillis) throws IOException
    {
        line.reset();
        try
        {
            record.write(json, times, maxBody);
            json.flush();
        }
        catch (IOException | RuntimeException e)
        {
            // The generator stopped inside the object (a body that would not parse again): start the next line afresh.
            json = newGenerator(line);
            throw new IllegalArgumentException("record " + record.id() + " could not be written as JSON: " + e, e);
        }
        line.write('\n');
        int n = line.size();
        if (maxBytes > 0 && path != null && size > 0 && size + n > maxBytes)
            rotate(nowMillis);
        line.writeTo(out);
        size += n;
    }

    /** Hands what is buffered to the operating system. */
    void flush() throws IOException
    {
        if (out != null)
            out.flush();
    }

    /** Flushes and closes the file (standard output is flushed, never closed). */
    void close() throws IOException
    {
        OutputStream o = out;
        out = null;
        if (o == null)
            return;
        if (path == null)
            o.flush();
        else
            o.close();
    }

    private void rotate(long nowMillis) throws IOException
    {
        close();
        Path dir = path.toAbsolutePath().getParent();
        String stamp = ROTATED.format(Instant.ofEpochMilli(nowMillis));
        Path target = dir.resolve(stem + "." + stamp + extension);
        for (int i = 1; Files.exists(target); i++)
            target = dir.resolve(stem + "." + stamp + "-" + i + extension);
        Files.move(path, target);
        rotations++;
        size = 0;
        out = newStream();
        prune(dir);
    }

    /** Deletes the oldest rotated files beyond {@code keep}. */
    private void prune(Path dir) throws IOException
    {
        List<Rotated> rotated = rotatedFiles(dir);
        for (int i = 0; i < rotated.size() - keep; i++)
            Files.deleteIfExists(rotated.get(i).file());
    }

    /** @return the rotated files of this log in {@code dir}, oldest first */
    List<Rotated> rotatedFiles(Path dir) throws IOException
    {
        List<Rotated> rotated = new ArrayList<>();
        try (DirectoryStream<Path> files = Files.newDirectoryStream(dir))
        {
            for (Path file : files)
            {
                Matcher m = rotatedName.matcher(file.getFileName().toString());
                if (m.matches())
                    rotated.add(new Rotated(file, m.group(1), m.group(2) == null ? 0 : Integer.parseInt(m.group(2))));
            }
        }
        rotated.sort(Comparator.comparing(Rotated::stamp).thenComparingInt(Rotated::index));
        return rotated;
    }

    /** A rotated file, its time stamp and its index within that time stamp. */
    record Rotated(Path file, String stamp, int index)
    {
    }

    private long nextBoundary(long nowMillis)
    {
        return rotateEveryMillis <= 0 ? Long.MAX_VALUE : Math.floorDiv(nowMillis, rotateEveryMillis) * rotateEveryMillis
            + rotateEveryMillis;
    }

    /** @return {@code epochMillis} as {@code 2026-12-01T22:34:22.123Z}, always three fraction digits */
    String time(long epochMillis)
    {
        long second = Math.floorDiv(epochMillis, 1000);
        if (second != cachedSecond)
        {
            cachedSecond = second;
            cachedSecondText = SECOND.format(Instant.ofEpochSecond(second));
        }
        int millis = (int)Math.floorMod(epochMillis, 1000);
        StringBuilder b = new StringBuilder(24).append(cachedSecondText).append('.');
        if (millis < 100)
            b.append('0');
        if (millis < 10)
            b.append('0');
        return b.append(millis).append('Z').toString();
    }

    /** The line being written: a byte array that is reset, not reallocated. */
    private static final class Line extends ByteArrayOutputStream
    {
        Line()
        {
            super(1024);
        }
    }
}
