package dev.sluice.api.upstream;

/**
 * An upstream response body read with demand (Jetty's {@code Content.Source} contract without Jetty types): call
 * {@link #read()} until it returns {@code null}, then {@link #demand(Runnable)}. Reading no further is how a client
 * binding exerts back-pressure: the upstream connection stops being read.
 *
 * <pre>{@code
 * void pump() {
 *     BodyChunk chunk;
 *     while ((chunk = body.read()) != null) {
 *         try { if (chunk.failure() != null) { fail(chunk.failure()); return; } consume(chunk.buffer()); }
 *         finally { chunk.release(); }
 *         if (chunk.last()) { done(); return; }
 *     }
 *     body.demand(this::pump);
 * }
 * }</pre>
 */
public interface BodySource
{
    /** @return the next chunk, or {@code null} if none is available now; a failure chunk is terminal */
    BodyChunk read();

    /**
     * Asks to have {@code onAvailable} run once when {@link #read()} may return a chunk. It may run on the thread that
     * read the upstream bytes, which serves other connections too: it must not block.
     */
    void demand(Runnable onAvailable);

    /** Aborts the body and the upstream request. Idempotent. */
    void fail(Throwable cause);
}
