package dev.sluice.plugin.cache;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Set;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonTypeInfo;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.MapperFeature;
import com.fasterxml.jackson.databind.ObjectWriter;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.cfg.JsonNodeFeature;
import com.fasterxml.jackson.databind.json.JsonMapper;
import dev.sluice.api.GatewayException;
import dev.sluice.api.ErrorKind;
import dev.sluice.api.model.ChatRequest;
import dev.sluice.api.model.ContentPart;
import dev.sluice.api.model.Tool;
import dev.sluice.api.model.ChatRequest.ToolChoice;

/**
 * Computes cache keys: a SHA-256 over the tenant and the canonical request as the upstream will be asked for it (the
 * target model after routing, system, messages, tools, tool choice, sampling, response format, user, metadata and
 * dialect-specific extensions), minus what does not change the answer — the stream flag, usage reporting, prompt-cache
 * hints ({@code cache_control}) — and minus the fields the operator chose to ignore.
 *
 * <p>The request is written as JSON with every object's keys sorted, so the same request gives the same key whichever
 * dialect it arrived in and however the client ordered its JSON. Two requests that differ in anything the provider
 * sees get different keys. An embeddings request is keyed by its bytes instead ({@link #embeddings}).
 *
 * <p>Thread-safe: the writer is immutable; each thread has its own digest.
 */
final class CacheKeys
{
    /** What an embeddings key has where a chat key has its request's JSON. */
    private static final byte[] EMBEDDINGS = {1, 'e', 'm', 'b', 'e', 'd', 0};
    private static final Set<String> CANONICAL_IGNORABLE = Set.of("user", "metadata", "parallel_tool_calls");

    private final ObjectWriter writer;
    private final boolean ignoreUser;
    private final boolean ignoreMetadata;
    private final boolean ignoreParallelToolCalls;
    private final Set<String> ignoredExtensions;

    /** The kinds of content parts and tool choices are part of the key. */
    @JsonTypeInfo(use = JsonTypeInfo.Id.SIMPLE_NAME, include = JsonTypeInfo.As.PROPERTY, property = "@kind")
    @JsonIgnoreProperties({"cacheControl"})
    private interface PartMixIn
    {
    }

    @JsonTypeInfo(use = JsonTypeInfo.Id.SIMPLE_NAME, include = JsonTypeInfo.As.PROPERTY, property = "@kind")
    private interface ChoiceMixIn
    {
    }

    @JsonIgnoreProperties({"cacheControl"})
    private interface ToolMixIn
    {
    }

    /** The model is the target model, given apart; the stream flags do not change the answer. */
    @JsonIgnoreProperties({"model", "stream", "includeUsage"})
    private interface RequestMixIn
    {
    }

    /**
     * @param ignore the {@code ignore} option: canonical field names or extension names
     */
    CacheKeys(List<String> ignore)
    {
        this.writer = JsonMapper.builder()
            .enable(MapperFeature.SORT_PROPERTIES_ALPHABETICALLY)
            .enable(SerializationFeature.ORDER_MAP_ENTRIES_BY_KEYS)
            .enable(JsonNodeFeature.WRITE_PROPERTIES_SORTED)
            // Absent, null and empty are the same request: dialects decode "no stop sequences" either way.
            .serializationInclusion(JsonInclude.Include.NON_EMPTY)
            .addMixIn(ContentPart.class, PartMixIn.class)
            .addMixIn(ToolChoice.class, ChoiceMixIn.class)
            .addMixIn(Tool.class, ToolMixIn.class)
            .addMixIn(ChatRequest.class, RequestMixIn.class)
            .build()
            .writer();
        this.ignoreUser = ignore.contains("user");
        this.ignoreMetadata = ignore.contains("metadata");
        this.ignoreParallelToolCalls = ignore.contains("parallel_tool_calls");
        Set<String> extensions = new java.util.HashSet<>(ignore);
        extensions.removeAll(CANONICAL_IGNORABLE);
        this.ignoredExtensions = Set.copyOf(extensions);
    }

    /**
     * @param tenant      who may receive the answer (see {@link CacheOptions#scope()})
     * @param targetModel the model the upstream is asked for
     * @param request     the canonical request
     * @return the key
     */
    Key key(String tenant, String targetModel, ChatRequest request)
    {
        MessageDigest digest = sha256();
        digest.update(tenant.getBytes(StandardCharsets.UTF_8));
        digest.update((byte)0);
        digest.update(targetModel == null ? new byte[0] : targetModel.getBytes(StandardCharsets.UTF_8));
        digest.update((byte)0);
        try
        {
            writer.writeValue(new DigestOutput(digest), reduce(request));
        }
        catch (IOException e)
        {
            // Writing records into a digest does no I/O: only a model that Jackson cannot write ends here.
            throw new GatewayException(ErrorKind.INTERNAL, "cache: cannot compute the request's key", e);
        }
        return Key.of(digest.digest());
    }

    /**
     * The key of an embeddings request: its bytes as the client sent them, with the client's dialect and path (the
     * answer is kept in that dialect, and a Gemini path says which action was called), never equal to a chat request's
     * key for the same bytes. The {@code ignore} option does not apply: nothing is decoded.
     *
     * @param tenant      who may receive the answer
     * @param targetModel the model the upstream is asked for
     */
    Key embeddings(String tenant, String targetModel, String dialect, String path, byte[] body)
    {
        MessageDigest digest = sha256();
        digest.update(tenant.getBytes(StandardCharsets.UTF_8));
        digest.update((byte)0);
        digest.update(targetModel == null ? new byte[0] : targetModel.getBytes(StandardCharsets.UTF_8));
        digest.update((byte)0);
        // A chat key goes on with a JSON object here ('{'): this byte keeps the two kinds apart whatever follows.
        digest.update(EMBEDDINGS);
        digest.update(dialect.getBytes(StandardCharsets.UTF_8));
        digest.update((byte)0);
        digest.update(path.getBytes(StandardCharsets.UTF_8));
        digest.update((byte)0);
        digest.update(body);
        return Key.of(digest.digest());
    }

    private ChatRequest reduce(ChatRequest r)
    {
        if (!ignoreUser && !ignoreMetadata && !ignoreParallelToolCalls
            && (ignoredExtensions.isEmpty() || r.extensions().isEmpty()))
            return r;
        Map<String, JsonNode> extensions = r.extensions();
        if (!ignoredExtensions.isEmpty() && !extensions.isEmpty())
        {
            extensions = new HashMap<>(extensions);
            extensions.keySet().removeAll(ignoredExtensions);
        }
        return new ChatRequest(r.model(), r.system(), r.messages(), r.tools(), r.toolChoice(),
            ignoreParallelToolCalls ? null : r.parallelToolCalls(), r.sampling(), r.responseFormat(), r.stream(),
            r.includeUsage(), ignoreUser ? null : r.user(), ignoreMetadata ? Map.of() : r.metadata(), extensions);
    }

    /** @return the SHA-256 of a client credential, as hex: a tenant name that is not the credential */
    static String credentialTenant(String credential)
    {
        return "credential:" + HexFormat.of().formatHex(sha256().digest(credential.getBytes(StandardCharsets.UTF_8)));
    }

    /**
     * One SHA-256 digest per thread (the runtime's pool threads), reset before each use: {@code getInstance} searches
     * the security providers on every call, and a fresh digest allocates its state (some 500 bytes) per request.
     */
    private static final ThreadLocal<MessageDigest> SHA_256 = ThreadLocal.withInitial(() ->
    {
        try
        {
            return MessageDigest.getInstance("SHA-256");
        }
        catch (NoSuchAlgorithmException e)
        {
            throw new IllegalStateException("every Java runtime has SHA-256", e);
        }
    });

    /** @return this thread's SHA-256 digest, reset (a key that failed half-way may have left input in it) */
    private static MessageDigest sha256()
    {
        MessageDigest digest = SHA_256.get();
        digest.reset();
        return digest;
    }

    /** A cache key: a SHA-256, as four longs (equal keys, equal requests, with odds of a collision of 2^-128). */
    record Key(long a, long b, long c, long d)
    {
        static Key of(byte[] sha)
        {
            java.nio.ByteBuffer bytes = java.nio.ByteBuffer.wrap(sha);
            return new Key(bytes.getLong(), bytes.getLong(), bytes.getLong(), bytes.getLong());
        }
    }

    /** Feeds what Jackson writes to the digest. */
    private static final class DigestOutput extends OutputStream
    {
        private final MessageDigest digest;

        DigestOutput(MessageDigest digest)
        {
            this.digest = digest;
        }

        @Override
        public void write(int b)
        {
            digest.update((byte)b);
        }

        @Override
        public void write(byte[] b, int off, int len)
        {
            digest.update(b, off, len);
        }
    }
}
