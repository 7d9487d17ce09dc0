package dev.sluice.plugin.openai.responses;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.sluice.api.ErrorKind;
import dev.sluice.api.GatewayException;
import dev.sluice.api.binding.BodyLimits;
import dev.sluice.api.binding.ServerBinding.ModelIn;
import dev.sluice.api.binding.ServerBinding.Operation;
import dev.sluice.api.exchange.Exchange;
import dev.sluice.api.exchange.Next;
import dev.sluice.api.exchange.Reply;
import dev.sluice.api.model.ChatRequest;
import dev.sluice.api.model.ChatResponse;
import dev.sluice.api.model.Message;
import dev.sluice.plugin.openai.responses.ResponseStore.StoredResponse;
import dev.sluice.support.codec.RecordingStream;
import dev.sluice.support.dialect.DialectServer;
import dev.sluice.support.json.Json;
import dev.sluice.support.json.JsonInput;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * Serves OpenAI's Responses API on one path ({@code POST /v1/responses}) and the responses it stored below it
 * ({@code GET /v1/responses/{id}}, {@code DELETE /v1/responses/{id}}, {@code GET /v1/responses/{id}/input_items}).
 *
 * <p>Conversation state. A request that names {@code previous_response_id} is forwarded as it is when the gateway
 * stored no such response: an OpenAI Responses provider keeps its own, and a route that translates refuses the id
 * with a 404 ({@link ResponsesRequestDecoder}). When the gateway stored it — it answered that turn by translation —
 * the request is expanded into the whole conversation (the stored turn's request and answer, then the new input; the
 * new {@code instructions} and {@code tools} only, as OpenAI does) and every provider is sent that. A turn answered by
 * translation is stored unless the request says {@code "store": false}: its whole answer, a stream's rebuilt as it is
 * relayed, under the id the client was given. A same-dialect answer is relayed as bytes and not stored: the provider
 * stored it.
 *
 * <p>Scope. A response is stored under the calling client's key (its SHA-256; one shared scope for clients without
 * one) and found only with the same key; the stored-response endpoints are answered here, before any other binding,
 * with that scope as their authorisation. Nothing here blocks: the store answers through stages.
 */
final class ResponsesServer extends DialectServer
{
    private static final byte[] PREVIOUS = "\"previous_response_id\"".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] STORE = "\"store\"".getBytes(StandardCharsets.US_ASCII);
    private static final String JSON = "application/json";

    private final String path;
    private final ResponseStore store;
    private final long maxRecordedChars;

    ResponsesServer(String path, BodyLimits limits, ResponseStore store, long maxBytes)
    {
        super(ResponsesCodec.INSTANCE, List.of(
            new Endpoint("POST", path),
            new Endpoint("GET", path + "/*/input_items", Operation.STATE, ModelIn.NONE),
            new Endpoint("GET", path + "/*", Operation.STATE, ModelIn.NONE),
            new Endpoint("DELETE", path + "/*", Operation.STATE, ModelIn.NONE)),
            limits, "input", null);
        this.path = path;
        this.store = store;
        // A conversation bigger than the whole store could not be kept anyway.
        this.maxRecordedChars = Math.max(1, maxBytes / 2);
    }

    /** Items, not messages with roles, so the peek cannot count them: the decoded request's turns are. */
    @Override
    protected boolean checksDecoded()
    {
        return super.checksDecoded() || limits().maxMessages() != null;
    }

    @Override
    protected GatewayException check(ChatRequest request)
    {
        GatewayException tooMany = limits().maxMessages() == null ? null
            : limits().checkMessages("input", request.messages().size());
        return tooMany != null ? tooMany : super.check(request);
    }

    @Override
    public CompletionStage<Reply> handle(Exchange exchange, Next next)
    {
        if (exchange.operation() == Operation.STATE)
            return state(exchange);
        String scope = scope(exchange.clientKey());
        String previous = indexOf(exchange.body(), PREVIOUS) < 0 ? null : previousResponseId(exchange.body());
        if (previous == null)
            return answer(exchange, next, scope);
        return store.get(scope, previous).thenCompose(stored ->
        {
            if (stored != null)
                exchange.request(continuing(stored, exchange));
            return answer(exchange, next, scope);
        });
    }

    /** Passes the turn on and stores a translated answer, unless the client said {@code "store": false}. */
    private CompletionStage<Reply> answer(Exchange exchange, Next next, String scope)
    {
        return super.handle(exchange, next).thenApply(reply ->
        {
            // Only a translated turn is the gateway's to keep: the request was decoded to be sent.
            ChatRequest sent = exchange.decodedRequest();
            if (sent == null || !storeWanted(exchange.body()))
                return reply;
            if (reply instanceof Reply.Message message)
            {
                put(scope, sent, message.response());
                return reply;
            }
            if (reply instanceof Reply.Stream stream)
            {
                return new Reply.Stream(new RecordingStream(stream.events(), maxRecordedChars, answer ->
                {
                    if (answer != null)
                        put(scope, sent, answer);
                }), stream.headers());
            }
            return reply;
        });
    }

    private void put(String scope, ChatRequest sent, ChatResponse response)
    {
        if (response.id() == null || response.id().isEmpty())
            return;
        store.put(scope, new StoredResponse(ResponseBodies.responseId(response.id()), sent, response,
            System.currentTimeMillis() / 1000));
    }

    /** The stored conversation, its answer, then this request's input; this request's instructions and tools. */
    private static ChatRequest continuing(StoredResponse stored, Exchange exchange)
    {
        ChatRequest turn = ResponsesCodec.INSTANCE.decodeRequest(withoutPrevious(exchange.body()), exchange.peek());
        List<Message> messages = new ArrayList<>(stored.request().messages());
        messages.add(new Message(Message.Role.ASSISTANT, stored.response().content(), null));
        messages.addAll(turn.messages());
        return new ChatRequest(turn.model(), turn.system(), messages, turn.tools(), turn.toolChoice(),
            turn.parallelToolCalls(), turn.sampling(), turn.responseFormat(), turn.stream(), turn.includeUsage(),
            turn.user(), turn.metadata(), turn.extensions());
    }

    /** {@code GET} or {@code DELETE} of a stored response, or {@code GET} of its input items, in the caller's scope. */
    private CompletionStage<Reply> state(Exchange exchange)
    {
        String rest = exchange.path().substring(path.length() + 1);
        boolean items = rest.endsWith("/input_items");
        String id = items ? rest.substring(0, rest.length() - "/input_items".length()) : rest;
        String scope = scope(exchange.clientKey());
        if (exchange.method().equals("DELETE"))
        {
            return store.delete(scope, id).thenApply(deleted ->
            {
                if (!deleted)
                    throw notFound(id);
                ObjectNode body = Json.MAPPER.createObjectNode().put("id", id).put("object", "response")
                    .put("deleted", true);
                return json(body);
            });
        }
        return store.get(scope, id).thenApply(stored ->
        {
            if (stored == null)
                throw notFound(id);
            if (!items)
                return new Reply.Bytes(200, JSON, ResponsesCodec.INSTANCE.encodeResponse(stored.response()), null);
            return json(inputItems(stored));
        });
    }

    /** The turn's input as the Responses API lists it: the request's {@code input} items, each with an id. */
    private static ObjectNode inputItems(StoredResponse stored)
    {
        ArrayNode data = Json.MAPPER.createArrayNode();
        try
        {
            JsonNode input = Json.MAPPER.readTree(ResponsesCodec.INSTANCE.encodeRequest(stored.request())).get("input");
            int n = 0;
            for (JsonNode item : input == null ? List.<JsonNode>of() : input)
            {
                ObjectNode copy = item.deepCopy();
                if (!copy.hasNonNull("id"))
                    copy.put("id", "item_" + n + "_" + stored.id());
                data.add(copy);
                n++;
            }
        }
        catch (IOException e)
        {
            throw new GatewayException(ErrorKind.INTERNAL, "stored input of " + stored.id() + " is unreadable", e);
        }
        ObjectNode list = Json.MAPPER.createObjectNode().put("object", "list");
        list.set("data", data);
        if (data.isEmpty())
        {
            list.putNull("first_id");
            list.putNull("last_id");
        }
        else
        {
            list.put("first_id", data.get(0).get("id").asText());
            list.put("last_id", data.get(data.size() - 1).get("id").asText());
        }
        list.put("has_more", false);
        return list;
    }

    private static Reply json(ObjectNode body)
    {
        try
        {
            return new Reply.Bytes(200, JSON, Json.MAPPER.writeValueAsBytes(body), null);
        }
        catch (JsonProcessingException e)
        {
            throw new GatewayException(ErrorKind.INTERNAL, "could not write a stored response", e);
        }
    }

    static GatewayException notFound(String id)
    {
        return new GatewayException(ErrorKind.NOT_FOUND, 404, "response " + JsonInput.shortString(id)
            + " not found (it was never stored by this gateway, it expired, or it was stored under another key)",
            null, "not_found", null);
    }

    /** @return the scope of a client key: its SHA-256, so the store never holds a key */
    static String scope(String clientKey)
    {
        if (clientKey == null)
            return "anonymous";
        try
        {
            return "key:" + HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256")
                .digest(clientKey.getBytes(StandardCharsets.UTF_8)));
        }
        catch (NoSuchAlgorithmException e)
        {
            throw new IllegalStateException("SHA-256 is missing", e);
        }
    }

    /** @return the request's {@code previous_response_id}, or {@code null} if it names none */
    private static String previousResponseId(byte[] body)
    {
        JsonNode root = tree(body);
        JsonNode previous = root == null ? null : root.get("previous_response_id");
        return previous != null && previous.isTextual() ? previous.asText() : null;
    }

    /** @return whether the client wants the turn stored: unless it said {@code "store": false} */
    private static boolean storeWanted(byte[] body)
    {
        // Most requests leave store at its default: no second parse of the body for them.
        if (indexOf(body, STORE) < 0)
            return true;
        JsonNode root = tree(body);
        JsonNode store = root == null ? null : root.get("store");
        return store == null || !store.isBoolean() || store.booleanValue();
    }

    private static byte[] withoutPrevious(byte[] body)
    {
        try
        {
            ObjectNode root = (ObjectNode)Json.MAPPER.readTree(body);
            root.remove("previous_response_id");
            return Json.MAPPER.writeValueAsBytes(root);
        }
        catch (IOException | ClassCastException e)
        {
            throw new GatewayException(ErrorKind.INVALID_REQUEST, "the body is not a JSON object", e);
        }
    }

    private static JsonNode tree(byte[] body)
    {
        try
        {
            JsonNode root = Json.MAPPER.readTree(body);
            return root != null && root.isObject() ? root : null;
        }
        catch (IOException e)
        {
            return null;
        }
    }

    /** @return the index of {@code needle} in {@code haystack}, or -1 */
    static int indexOf(byte[] haystack, byte[] needle)
    {
        outer:
        for (int i = 0, last = haystack.length - needle.length; i <= last; i++)
        {
            for (int j = 0; j < needle.length; j++)
            {
                if (haystack[i + j] != needle[j])
                    continue outer;
            }
            return i;
        }
        return -1;
    }

    @Override
    public void close()
    {
        store.close();
    }
}
