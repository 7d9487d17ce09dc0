package dev.sluice.plugin.openai.responses;

import dev.sluice.api.ErrorKind;
import dev.sluice.api.GatewayException;
import dev.sluice.api.exchange.ResponseHeaders;
import dev.sluice.support.codec.CanonicalJson;
import dev.sluice.support.redis.SharedRedis;
import io.lettuce.core.SetArgs;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The {@link ResponseStore} every replica shares, in Redis ({@link SharedRedis}: the process's one connection to that
 * Redis, a bounded wait per command): one key per stored turn, {@code PREFIX + "responses:" + scope + ":" + id}, set
 * with the store's time to live ({@code SET … PX}), so a conversation started on one replica is continued, read and
 * deleted on any other.
 *
 * <p>Failure. A lookup ({@link #get}, {@link #delete}) that Redis cannot answer — down, slower than its timeout,
 * overloaded — fails with a 503 {@link GatewayException} ({@link ErrorKind#UNAVAILABLE}): the client is told to retry,
 * never sent a conversation shorter than the one it named. A {@link #put} that fails is logged (once per streak of
 * failures, at WARN) and the turn is not stored; its stage completes normally, as the answer was already given.
 *
 * <p>An entry is {@code 'S' 'R' version(1) created-at(int64) id(uint16 length, UTF-8) request-length(int32)} followed
 * by the request and the answer as {@link CanonicalJson}. One of another version, or damaged, reads as absent. A turn
 * whose entry is larger than {@code maxEntryBytes} is not stored.
 */
public final class RedisResponseStore implements ResponseStore
{
    private static final Logger LOG = LoggerFactory.getLogger(RedisResponseStore.class);
    static final byte VERSION = 1;
    private static final byte MAGIC_0 = 'S';
    private static final byte MAGIC_1 = 'R';

    private static final ResponseHeaders RETRY = ResponseHeaders.of("retry-after", "1");

    private final SharedRedis redis;
    private final Executor executor;
    private final String prefix;
    private final long ttlMillis;
    private final long maxEntryBytes;
    private final AtomicBoolean failing = new AtomicBoolean();

    /**
     * @param redis         the process's connection, released when this store closes
     * @param executor      the runtime's executor, where a turn read from Redis is decoded and its conversation goes on
     * @param ttl           how long a stored turn can be continued or read
     * @param maxEntryBytes the largest entry stored, encoded
     */
    public RedisResponseStore(SharedRedis redis, Executor executor, Duration ttl, long maxEntryBytes)
    {
        this.redis = redis;
        this.executor = executor;
        this.prefix = redis.prefix() + "responses:";
        this.ttlMillis = Math.max(1, ttl.toMillis());
        this.maxEntryBytes = maxEntryBytes;
    }

    @Override
    public CompletionStage<StoredResponse> get(String scope, String id)
    {
        // Decoded, and the conversation continued, on the runtime's executor: a long one is work for a pool thread,
        // not for Redis' event loop.
        return redis.<byte[]>call(c -> c.get(key(scope, id))).handleAsync((bytes, failure) ->
        {
            if (failure != null)
                throw unavailable(failure);
            recovered();
            return bytes == null ? null : decode(bytes, id);
        }, executor);
    }

    @Override
    public CompletionStage<Void> put(String scope, StoredResponse response)
    {
        byte[] bytes = encode(response);
        if (bytes.length > maxEntryBytes)
        {
            LOG.debug("response {} not stored: {} bytes, over the store's {}", response.id(), bytes.length, maxEntryBytes);
            return CompletableFuture.completedFuture(null);
        }
        return redis.call(c -> c.set(key(scope, response.id()), bytes, SetArgs.Builder.px(ttlMillis)))
            .handle((ok, failure) ->
            {
                if (failure != null)
                {
                    if (failing.compareAndSet(false, true))
                        LOG.warn("the response store at {} is unavailable ({}): turns answered meanwhile are not stored",
                            redis.describe(), cause(failure).getMessage());
                }
                else
                {
                    recovered();
                }
                return null;
            });
    }

    @Override
    public CompletionStage<Boolean> delete(String scope, String id)
    {
        return redis.call(c -> c.del(key(scope, id))).handle((count, failure) ->
        {
            if (failure != null)
                throw unavailable(failure);
            recovered();
            return count != null && count > 0;
        });
    }

    private String key(String scope, String id)
    {
        return prefix + scope + ":" + id;
    }

    private void recovered()
    {
        if (failing.get() && failing.compareAndSet(true, false))
            LOG.info("the response store at {} answers again", redis.describe());
    }

    private GatewayException unavailable(Throwable failure)
    {
        return new GatewayException(ErrorKind.UNAVAILABLE, 503, "the response store is unavailable ("
            + cause(failure).getMessage() + "); retry the request", null, "server_error", null, RETRY);
    }

    private static Throwable cause(Throwable failure)
    {
        return failure instanceof CompletionException && failure.getCause() != null ? failure.getCause() : failure;
    }

    /** @return {@code response} as the bytes of its entry */
    static byte[] encode(StoredResponse response)
    {
        byte[] request = CanonicalJson.write(response.request());
        byte[] answer = CanonicalJson.write(response.response());
        byte[] id = response.id().getBytes(StandardCharsets.UTF_8);
        ByteArrayOutputStream bytes = new ByteArrayOutputStream(19 + id.length + request.length + answer.length);
        try (DataOutputStream out = new DataOutputStream(bytes))
        {
            out.writeByte(MAGIC_0);
            out.writeByte(MAGIC_1);
            out.writeByte(VERSION);
            out.writeLong(response.createdAt());
            out.writeShort(id.length);
            out.write(id);
            out.writeInt(request.length);
            out.write(request);
            out.write(answer);
        }
        catch (IOException impossible)
        {
            throw new IllegalStateException("writing to memory failed", impossible);
        }
        return bytes.toByteArray();
    }

    /** @return the stored turn, or {@code null} if the bytes are of another version or damaged */
    static StoredResponse decode(byte[] bytes, String id)
    {
        if (bytes.length < 17 || bytes[0] != MAGIC_0 || bytes[1] != MAGIC_1 || bytes[2] != VERSION)
        {
            LOG.debug("stored response {} not read: not an entry of version {}", id, VERSION);
            return null;
        }
        try
        {
            ByteBuffer in = ByteBuffer.wrap(bytes);
            in.position(3);
            long createdAt = in.getLong();
            byte[] storedId = new byte[Short.toUnsignedInt(in.getShort())];
            in.get(storedId);
            int requestLength = in.getInt();
            int requestAt = in.position();
            int answerAt = requestAt + requestLength;
            return new StoredResponse(new String(storedId, StandardCharsets.UTF_8),
                CanonicalJson.readRequest(bytes, requestAt, requestLength),
                CanonicalJson.readResponse(bytes, answerAt, bytes.length - answerAt), createdAt);
        }
        catch (IOException | RuntimeException damaged)
        {
            LOG.debug("stored response {} not read: {}", id, damaged.getMessage());
            return null;
        }
    }

    @Override
    public void close()
    {
        redis.close();
    }
}
