package dev.sluice.plugin.cache;

import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.function.Function;

import dev.sluice.api.codec.DialectCodec;
import dev.sluice.api.model.ChatResponse;
import dev.sluice.api.model.Usage;
import dev.sluice.support.codec.CanonicalJson;

/**
 * A {@link CachedAnswer} as the bytes the second level keeps, in either of its forms, versioned:
 *
 * <pre>
 * 'S' 'C' version(1)  kind('B' | 'C')  expires-at(int64, epoch ms)
 *   'B': usage(5 × int64)  dialect(uint16 length, UTF-8)  content-type(uint16 length, UTF-8; 0xFFFF = none)  body(rest)
 *   'C': the canonical response as {@link CanonicalJson}(rest)
 * </pre>
 *
 * A body keeps the provider's bytes, so a client of its dialect gets them as they are on any replica; it needs that
 * dialect's codec to be decoded for a client of another dialect or a stream. The expiry travels with the entry: a
 * replica that reads it keeps it in memory only for what is left of its time to live. Bytes with another magic or
 * version, or that do not read, are {@link Unreadable}: the caller treats them as a miss (a replica of an older or
 * newer gateway wrote them) and the next answer replaces them.
 *
 * <p>Stateless and thread-safe.
 */
final class AnswerEncoding
{
    static final byte VERSION = 1;
    private static final byte MAGIC_0 = 'S';
    private static final byte MAGIC_1 = 'C';
    private static final byte BODY = 'B';
    private static final byte CANONICAL = 'C';
    private static final int NO_CONTENT_TYPE = 0xFFFF;
    private static final int HEADER = 4 + 8;

    private AnswerEncoding()
    {
    }

    /**
     * @param expiresAtMillis when the entry's time to live ends, in epoch milliseconds
     * @return the entry's bytes
     */
    static byte[] encode(CachedAnswer answer, long expiresAtMillis)
    {
        ByteArrayOutputStream bytes;
        if (answer instanceof CachedAnswer.Body body)
        {
            bytes = new ByteArrayOutputStream(HEADER + 96 + body.body.length);
            write(bytes, BODY, expiresAtMillis, out ->
            {
                Usage usage = body.usage() == null ? Usage.ZERO : body.usage();
                out.writeLong(usage.inputTokens());
                out.writeLong(usage.outputTokens());
                out.writeLong(usage.cachedInputTokens());
                out.writeLong(usage.cacheCreationTokens());
                out.writeLong(usage.reasoningTokens());
                string(out, body.dialect());
                if (body.contentType == null)
                    out.writeShort(NO_CONTENT_TYPE);
                else
                    string(out, body.contentType);
                out.write(body.body);
            });
        }
        else
        {
            byte[] json = CanonicalJson.write(answer.canonical());
            bytes = new ByteArrayOutputStream(HEADER + json.length);
            write(bytes, CANONICAL, expiresAtMillis, out -> out.write(json));
        }
        return bytes.toByteArray();
    }

    private interface Fields
    {
        void write(DataOutputStream out) throws IOException;
    }

    private static void write(ByteArrayOutputStream bytes, byte kind, long expiresAtMillis, Fields fields)
    {
        try (DataOutputStream out = new DataOutputStream(bytes))
        {
            out.writeByte(MAGIC_0);
            out.writeByte(MAGIC_1);
            out.writeByte(VERSION);
            out.writeByte(kind);
            out.writeLong(expiresAtMillis);
            fields.write(out);
        }
        catch (IOException impossible)
        {
            throw new IllegalStateException("writing to memory failed", impossible);
        }
    }

    private static void string(DataOutputStream out, String s) throws IOException
    {
        byte[] utf8 = s.getBytes(StandardCharsets.UTF_8);
        if (utf8.length >= NO_CONTENT_TYPE)
            throw new IOException("string too long");
        out.writeShort(utf8.length);
        out.write(utf8);
    }

    /**
     * @param codecs    the codec of a dialect, or {@code null} if this replica has none for it
     * @param nowMillis the time now, in epoch milliseconds
     * @return the answer, with what is left of its time to live, or {@code null} if it has expired
     * @throws Unreadable if the bytes are of another version, damaged, or a body of a dialect without a codec here
     */
    static CachedAnswer decode(byte[] bytes, Function<String, DialectCodec> codecs, long nowMillis)
    {
        if (bytes.length < HEADER || bytes[0] != MAGIC_0 || bytes[1] != MAGIC_1)
            throw new Unreadable("not a cache entry");
        if (bytes[2] != VERSION)
            throw new Unreadable("entry version " + bytes[2] + " (this gateway reads " + VERSION + ")");
        ByteBuffer in = ByteBuffer.wrap(bytes);
        in.position(3);
        byte kind = in.get();
        long left = in.getLong() - nowMillis;
        if (left <= 0)
            return null;
        long ttlNanos = left * 1_000_000L;
        try
        {
            if (kind == CANONICAL)
            {
                ChatResponse response = CanonicalJson.readResponse(bytes, in.position(), in.remaining());
                return CachedAnswer.of(response, ttlNanos);
            }
            if (kind != BODY)
                throw new Unreadable("entry kind " + kind);
            Usage usage = new Usage(in.getLong(), in.getLong(), in.getLong(), in.getLong(), in.getLong());
            String dialect = string(in);
            String contentType = string(in);
            DialectCodec codec = codecs.apply(dialect);
            if (codec == null)
                throw new Unreadable("no codec for dialect " + dialect + " on this replica yet");
            byte[] body = new byte[in.remaining()];
            in.get(body);
            return CachedAnswer.of(body, contentType, usage, codec, ttlNanos);
        }
        catch (IOException | RuntimeException damaged)
        {
            if (damaged instanceof Unreadable u)
                throw u;
            throw new Unreadable("damaged entry: " + damaged.getMessage());
        }
    }

    private static String string(ByteBuffer in)
    {
        int length = Short.toUnsignedInt(in.getShort());
        if (length == NO_CONTENT_TYPE)
            return null;
        byte[] utf8 = new byte[length];
        in.get(utf8);
        return new String(utf8, StandardCharsets.UTF_8);
    }

    /** Bytes this gateway does not read as an answer: a miss. */
    static final class Unreadable extends RuntimeException
    {
        Unreadable(String message)
        {
            super(message, null, false, false);
        }
    }
}
