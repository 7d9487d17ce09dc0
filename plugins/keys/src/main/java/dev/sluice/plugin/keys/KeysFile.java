package dev.sluice.plugin.keys;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import dev.sluice.api.config.ConfigException;
import dev.sluice.support.config.Options;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Objects;

/**
 * Reads a keys file: YAML, or JSON when its name ends in {@code .json}; either {@code keys: [ … ]} or the bare list,
 * each entry a {@link KeyDefinition}. Blocking I/O: called at startup and on the runtime's executor, never on a request
 * path. A problem is an {@link IllegalArgumentException} whose message names the file and what is wrong — a line and
 * column, or the entry and field — and never quotes the file's content, so it is safe to log.
 */
final class KeysFile
{
    /** A keys file larger than this is refused: a million keys fit in far less. */
    static final long MAX_BYTES = 64L << 20;

    private static final ObjectMapper YAML = YAMLMapper.builder().build();
    private static final ObjectMapper JSON = JsonMapper.builder().build();

    private final Path path;

    /** @param path the file */
    KeysFile(Path path)
    {
        this.path = path;
    }

    /** @return the file's path */
    Path path()
    {
        return path;
    }

    /**
     * What the file looks like now, to notice a change without reading it.
     *
     * @param size     its size in bytes
     * @param modified its modification time, in nanoseconds since the epoch (as precise as the file system keeps it)
     * @param fileKey  the file system's identity of the file (an inode), so that a file replaced by a rename is seen,
     *                 or {@code null}
     */
    record Stamp(long size, long modified, Object fileKey)
    {
    }

    /**
     * @return the file's current stamp
     * @throws IllegalArgumentException if it cannot be read
     */
    Stamp stamp()
    {
        try
        {
            BasicFileAttributes a = Files.readAttributes(path, BasicFileAttributes.class);
            java.time.Instant m = a.lastModifiedTime().toInstant();
            return new Stamp(a.size(), m.getEpochSecond() * 1_000_000_000L + m.getNano(), a.fileKey());
        }
        catch (IOException e)
        {
            throw new IllegalArgumentException(problem(e));
        }
    }

    /**
     * Reads and validates the file.
     *
     * @return the keys it defines, in order (unchecked for duplicates: {@link KeyTable#of} does that with the config's)
     * @throws IllegalArgumentException naming the file and the problem, never a key or a hash
     */
    List<VirtualKey> read()
    {
        byte[] bytes;
        try
        {
            if (Files.size(path) > MAX_BYTES)
                throw new IllegalArgumentException(path + ": larger than " + MAX_BYTES + " bytes (expected: a keys file)");
            bytes = Files.readAllBytes(path);
        }
        catch (IOException e)
        {
            throw new IllegalArgumentException(problem(e));
        }
        boolean json = path.getFileName().toString().toLowerCase(Locale.ROOT).endsWith(".json");
        JsonNode root;
        try
        {
            root = (json ? JSON : YAML).readTree(bytes);
        }
        catch (JsonProcessingException e)
        {
            // Jackson's and SnakeYAML's messages quote the text around the fault, which may be a hash: give the place only.
            String where = e.getLocation() == null ? "" : " at line " + e.getLocation().getLineNr() + ", column "
                + e.getLocation().getColumnNr();
            throw new IllegalArgumentException(path + ": not valid " + (json ? "JSON" : "YAML") + where);
        }
        catch (IOException e)
        {
            throw new IllegalArgumentException(problem(e));
        }
        JsonNode list;
        String listPath;
        if (root == null || root.isMissingNode() || root.isNull())
            return List.of();
        if (root.isArray())
        {
            list = root;
            listPath = "";
        }
        else if (root.isObject())
        {
            var names = root.fieldNames();
            while (names.hasNext())
            {
                String name = names.next();
                if (!name.equals("keys"))
                    throw new IllegalArgumentException(path + ": " + name + ": unknown key (expected one of: keys)");
            }
            list = root.path("keys");
            listPath = "keys";
            if (list.isMissingNode() || list.isNull())
                return List.of();
            if (!list.isArray())
                throw new IllegalArgumentException(path + ": keys: wrong type (expected: a list of keys)");
        }
        else
            throw new IllegalArgumentException(path + ": wrong type (expected: keys: [ … ] or a list of keys)");
        List<VirtualKey> keys = new ArrayList<>(list.size());
        for (int i = 0; i < list.size(); i++)
        {
            String where = listPath + "[" + i + "]";
            try
            {
                KeyDefinition definition = Options.bind(list.get(i), KeyDefinition.class, where);
                keys.add(new VirtualKey(definition, "file", path + ": " + where));
            }
            catch (ConfigException e)
            {
                throw new IllegalArgumentException(path + ": " + e.getMessage());
            }
        }
        return keys;
    }

    private String problem(IOException e)
    {
        if (e instanceof NoSuchFileException)
            return path + ": no such file";
        if (e instanceof java.nio.file.AccessDeniedException)
            return path + ": permission denied";
        return path + ": cannot read (" + e.getClass().getSimpleName() + ")";
    }

    @Override
    public String toString()
    {
        return Objects.toString(path);
    }
}
