package dev.sluice.support.json;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.util.ByteArrayBuilder;
import dev.sluice.api.ErrorKind;
import dev.sluice.api.GatewayException;
import dev.sluice.support.json.Json;

import java.io.IOException;

/** Writes JSON with the shared mapper's generator, so raw {@link com.fasterxml.jackson.databind.JsonNode}s embed directly. */
public final class JsonOutput
{
    /** The body of a generator run; may throw the generator's {@link IOException}. */
    @FunctionalInterface
    public interface Body
    {
        void write(JsonGenerator generator) throws IOException;
    }

    private JsonOutput()
    {
    }

    /** @return the UTF-8 bytes {@code body} writes */
    public static byte[] write(Body body)
    {
        ByteArrayBuilder out = new ByteArrayBuilder(512);
        write(out, body);
        return out.toByteArray();
    }

    /** Appends what {@code body} writes to {@code out}. */
    public static void write(ByteArrayBuilder out, Body body)
    {
        try (JsonGenerator generator = Json.MAPPER.createGenerator(out))
        {
            body.write(generator);
        }
        catch (IOException e)
        {
            // Writing to memory does not fail with I/O; a failure here is a bug (a tree that cannot be written).
            throw new GatewayException(ErrorKind.INTERNAL, "could not write JSON", e);
        }
    }
}
