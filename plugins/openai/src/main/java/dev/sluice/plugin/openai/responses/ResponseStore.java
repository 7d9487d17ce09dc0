package dev.sluice.plugin.openai.responses;

import dev.sluice.api.model.ChatRequest;
import dev.sluice.api.model.ChatResponse;

import java.util.Objects;
import java.util.concurrent.CompletionStage;

/**
 * Where the Responses dialect keeps the responses it answered by translation ({@code store: true}), so that a
 * follow-up naming one in {@code previous_response_id} can be expanded into the whole conversation for any provider,
 * and {@code GET}/{@code DELETE /v1/responses/{id}} find it. Entries are scoped: a response is found only under the
 * scope it was stored in (the calling key), and only until its time to live ends.
 *
 * <p>Every method answers through a {@link CompletionStage} and never blocks: the in-memory store completes at once,
 * a store across replicas after its round trip. A store that cannot answer {@link #get} or {@link #delete} fails the
 * stage with a {@link dev.sluice.api.GatewayException} (503: the client retries; a conversation is never continued
 * without the turns it named); a {@link #put} that fails is the store's to log, and its stage completes normally.
 * Implementations are thread-safe.
 */
public interface ResponseStore extends AutoCloseable
{
    /** @return the response stored under {@code id} in {@code scope}, or a stage completed with {@code null} */
    CompletionStage<StoredResponse> get(String scope, String id);

    /** Stores {@code response} under its id in {@code scope}, replacing what was there. */
    CompletionStage<Void> put(String scope, StoredResponse response);

    /** @return whether a response was stored under {@code id} in {@code scope} (and is now removed) */
    CompletionStage<Boolean> delete(String scope, String id);

    /** Releases what the store holds open; the default holds nothing. */
    @Override
    default void close()
    {
    }

    /**
     * One stored turn: the conversation as it was sent (the earlier turns expanded, system instructions and tools
     * included) and the answer, both canonical so that any provider can be sent the next turn.
     *
     * @param id        the id the client was given ({@code resp_…})
     * @param request   the request as sent, the whole conversation up to this turn
     * @param response  the answer
     * @param createdAt when it was answered, in epoch seconds
     */
    record StoredResponse(String id, ChatRequest request, ChatResponse response, long createdAt)
    {
        public StoredResponse
        {
            Objects.requireNonNull(id, "id");
            Objects.requireNonNull(request, "request");
            Objects.requireNonNull(response, "response");
        }
    }
}
