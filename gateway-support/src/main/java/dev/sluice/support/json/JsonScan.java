package dev.sluice.support.json;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;

import java.io.IOException;

/**
 * Reads one top-level field of a JSON object in place, with a streaming parser: no tree, no String of the document,
 * everything else skipped. For the cheap scans on the fast path (a response's usage, a stream event's type), which
 * feed accounting and routing of events only, so a document they cannot read yields {@code null} and is relayed as
 * it is.
 *
 * <pre>{@code
 * Usage usage = JsonScan.field(data, offset, length, "usage", JsonToken.START_OBJECT, MyCodec::readUsage);
 * String type = JsonScan.field(data, offset, length, "type", JsonToken.VALUE_STRING, JsonParser::getText);
 * }</pre>
 *
 * Stateless and thread-safe.
 */
public final class JsonScan
{
    /** Reads the value the parser is on; for an object or array, up to its end token. */
    @FunctionalInterface
    public interface ValueReader<T>
    {
        T read(JsonParser parser) throws IOException;
    }

    private JsonScan()
    {
    }

    /**
     * @param data   the document is {@code data[offset, offset + length)}
     * @param name   the top-level field
     * @param token  the token its value must start with ({@link JsonToken#START_OBJECT}, {@link JsonToken#VALUE_STRING}, …)
     * @param reader reads the value, the parser on its first token
     * @return what {@code reader} returns for the first such field, or {@code null} if the document is not an object,
     *         has no such field with such a value, or does not read
     */
    public static <T> T field(byte[] data, int offset, int length, String name, JsonToken token, ValueReader<T> reader)
    {
        try (JsonParser parser = Json.FACTORY.createParser(data, offset, length))
        {
            if (parser.nextToken() != JsonToken.START_OBJECT)
                return null;
            while (parser.nextToken() == JsonToken.FIELD_NAME)
            {
                String field = parser.currentName();
                JsonToken value = parser.nextToken();
                if (name.equals(field) && value == token)
                    return reader.read(parser);
                parser.skipChildren();
            }
            return null;
        }
        catch (IOException e)
        {
            return null;
        }
    }
}
