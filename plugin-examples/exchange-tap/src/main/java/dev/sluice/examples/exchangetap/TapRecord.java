package dev.sluice.examples.exchangetap;

import com.fasterxml.jackson.core.JsonGenerator;
import dev.sluice.api.ErrorKind;
import dev.sluice.api.exchange.Completion;
import dev.sluice.api.exchange.Exchange.Identity;
import dev.sluice.api.exchange.Exchange.Stage;
import dev.sluice.api.model.Usage;

import java.io.IOException;

/**
 * One finished exchange, copied out of a {@link Completion} (which is valid only while the listener runs). Immutable.
 *
 * <p>Durations are nanoseconds from {@link Stage#ARRIVAL}, taken from {@link Completion#nanos(Stage)}; {@code -1} when
 * the exchange never reached the stage (a refusal has no upstream headers, a non-streamed answer no first event).
 *
 * @param seq                   the position in the ring: 0 for the first completion this binding saw
 * @param id                    the request id ({@code x-request-id})
 * @param server                the server binding reached, or {@code null} (no endpoint matched)
 * @param dialect               the client's dialect, or {@code null}
 * @param method                the HTTP method
 * @param path                  the path, without the query
 * @param outcome               how it ended
 * @param status                the status the client was sent (499: the client left before any)
 * @param errorKind             what went wrong, or {@code null}
 * @param errorMessage          the client-safe message of the failure, or {@code null}
 * @param model                 the model asked for, or {@code null}
 * @param targetModel           the model the upstream was asked for, or {@code null}
 * @param stream                whether a stream was asked for
 * @param keyId                 the id of the caller's key, as an authentication binding set it, or {@code null}
 * @param team                  the caller's team, or {@code null}
 * @param usage                 the provider's usage, or {@code null}
 * @param requestBytes          request body bytes read
 * @param responseBytes         response body bytes handed to the connection
 * @param totalNanos            arrival to end
 * @param upstreamHeadersNanos  arrival to the provider's response headers, or -1
 * @param firstEventNanos       arrival to the first event written to the client, or -1
 * @param hadExchange           whether the request became an exchange (false: refused before the chain)
 * @param tapped                whether the exchange passed through this binding
 * @param exchangeListenerCalls how often this binding's per-exchange listener had run when the gateway-wide one ran
 *                              (1 for a tapped exchange: per-exchange listeners run first, once)
 */
record TapRecord(long seq, String id, String server, String dialect, String method, String path, Completion.Outcome outcome,
                 int status, ErrorKind errorKind, String errorMessage, String model, String targetModel, boolean stream,
                 String keyId, String team, Usage usage, long requestBytes, long responseBytes, long totalNanos,
                 long upstreamHeadersNanos, long firstEventNanos, boolean hadExchange, boolean tapped,
                 int exchangeListenerCalls)
{
    /**
     * Copies what a completion says; reads it only during the listener call.
     *
     * @param calls how often this binding's per-exchange listener ran for the exchange, -1 if it never saw it
     */
    static TapRecord of(long seq, Completion c, int calls)
    {
        Identity identity = c.identity();
        long arrival = c.nanos(Stage.ARRIVAL);
        return new TapRecord(seq, c.id(), c.server(), c.dialect(), c.method(), c.path(), c.outcome(), c.status(),
            c.errorKind(), c.errorMessage(), c.model(), c.targetModel(), c.stream(),
            identity == null ? null : identity.keyId(), identity == null ? null : identity.team(), c.usage(),
            c.requestBytes(), c.responseBytes(), since(arrival, c.nanos(Stage.RESPONSE_END)),
            since(arrival, c.nanos(Stage.UPSTREAM_HEADERS)), since(arrival, c.nanos(Stage.FIRST_EVENT)),
            c.exchange() != null, calls >= 0, Math.max(calls, 0));
    }

    private static long since(long arrival, long at)
    {
        // nanoTime values may be negative: only 0 means "not reached".
        return at == 0 ? -1 : at - arrival;
    }

    /** Writes this record as one JSON object (snake_case keys, nulls written as null). */
    void write(JsonGenerator json) throws IOException
    {
        json.writeStartObject();
        json.writeNumberField("seq", seq);
        json.writeStringField("id", id);
        json.writeStringField("server", server);
        json.writeStringField("dialect", dialect);
        json.writeStringField("method", method);
        json.writeStringField("path", path);
        json.writeStringField("outcome", outcome == null ? null : outcome.name());
        json.writeNumberField("status", status);
        json.writeStringField("error_kind", errorKind == null ? null : errorKind.name());
        json.writeStringField("error_message", errorMessage);
        json.writeStringField("model", model);
        json.writeStringField("target_model", targetModel);
        json.writeBooleanField("stream", stream);
        json.writeStringField("key_id", keyId);
        json.writeStringField("team", team);
        if (usage == null)
        {
            json.writeNullField("usage");
        }
        else
        {
            json.writeObjectFieldStart("usage");
            json.writeNumberField("input_tokens", usage.inputTokens());
            json.writeNumberField("output_tokens", usage.outputTokens());
            json.writeNumberField("cached_input_tokens", usage.cachedInputTokens());
            json.writeNumberField("cache_creation_tokens", usage.cacheCreationTokens());
            json.writeNumberField("reasoning_tokens", usage.reasoningTokens());
            json.writeEndObject();
        }
        json.writeNumberField("request_bytes", requestBytes);
        json.writeNumberField("response_bytes", responseBytes);
        json.writeNumberField("total_ns", totalNanos);
        json.writeNumberField("upstream_headers_ns", upstreamHeadersNanos);
        json.writeNumberField("first_event_ns", firstEventNanos);
        json.writeBooleanField("exchange", hadExchange);
        json.writeBooleanField("tapped", tapped);
        json.writeNumberField("exchange_listener_calls", exchangeListenerCalls);
        json.writeEndObject();
    }
}
