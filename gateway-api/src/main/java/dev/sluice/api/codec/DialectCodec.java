package dev.sluice.api.codec;

import dev.sluice.api.GatewayException;
import dev.sluice.api.model.ChatRequest;
import dev.sluice.api.model.ChatResponse;
import dev.sluice.api.model.Usage;
import com.fasterxml.jackson.core.io.JsonStringEncoder;

import java.util.function.Supplier;

/**
 * A dialect's wire format, both ways, for requests, responses, streams and errors. A dialect plugin's server and
 * client bindings share one codec. Codecs are stateless and thread-safe; stream codecs are created per stream.
 *
 * <p>Decoding never trusts input: malformed JSON, wrong types and excessive nesting become
 * {@link GatewayException}s of kind {@code INVALID_REQUEST} naming the field; a feature the canonical model cannot
 * carry becomes {@code UNSUPPORTED} naming the feature, never silently dropped.
 */
public interface DialectCodec
{
    /** @return the dialect's name, e.g. {@code "openai"}; equal names mean byte-compatible wire formats */
    String dialect();

    /**
     * Scans {@code body} for the model and the stream flag without building a tree, and checks that it is one
     * well-formed JSON object.
     *
     * @throws GatewayException {@code INVALID_REQUEST} for malformed JSON or a missing/mistyped model
     */
    RequestPeek peek(byte[] body);

    /** Decodes a request body into the canonical model. */
    ChatRequest decodeRequest(byte[] body);

    /**
     * Decodes a request with what the server binding's peek found. The default ignores the peek; a dialect that
     * carries the model or the stream flag outside the body (Gemini: in the path) takes them from it.
     */
    default ChatRequest decodeRequest(byte[] body, RequestPeek peek)
    {
        return decodeRequest(body);
    }

    /** Encodes a canonical request into a request body of this dialect. */
    byte[] encodeRequest(ChatRequest request);

    /** Decodes a complete response body. */
    ChatResponse decodeResponse(byte[] body);

    /** Encodes a canonical response into a complete response body. */
    byte[] encodeResponse(ChatResponse response);

    /** @return a new decoder for one streamed response of this dialect */
    StreamDecoder newStreamDecoder();

    /**
     * @param request the client's request, decoded on the first call; an encoder calls it only when it encodes a
     *                canonical event that depends on it (OpenAI's {@code include_usage}), so a relayed stream of raw
     *                frames never decodes the request
     * @return a new encoder for one streamed response of this dialect
     */
    StreamEncoder newStreamEncoder(Supplier<ChatRequest> request);

    /** @return a complete error body of this dialect for {@code error} (content type {@code application/json}) */
    byte[] encodeError(GatewayException error);

    /**
     * Maps an upstream error response of this dialect onto a {@link GatewayException} that keeps the upstream's
     * status and a safe message.
     */
    GatewayException decodeError(int status, byte[] body);

    /** @return the usage in a complete response body, scanned cheaply, or {@code null} if it has none */
    Usage scanUsage(byte[] body);

    /**
     * Returns {@code body} with the model value replaced, splicing at the offsets found by {@link #peek(byte[])}.
     */
    default byte[] rewriteModel(byte[] body, RequestPeek peek, String model)
    {
        if (peek.modelStart() < 0)
            return body;
        if (isPlainAscii(model))
        {
            // The usual model name needs no escaping: write it straight into the copy, with no String or array on
            // the way (this runs for every aliased request).
            int length = model.length() + 2;
            byte[] out = new byte[body.length - (peek.modelEnd() - peek.modelStart()) + length];
            System.arraycopy(body, 0, out, 0, peek.modelStart());
            int at = peek.modelStart();
            out[at++] = '"';
            for (int i = 0; i < model.length(); i++)
                out[at++] = (byte)model.charAt(i);
            out[at++] = '"';
            System.arraycopy(body, peek.modelEnd(), out, at, body.length - peek.modelEnd());
            return out;
        }
        byte[] value = JsonStringEncoder.getInstance().quoteAsUTF8(model);
        byte[] out = new byte[body.length - (peek.modelEnd() - peek.modelStart()) + value.length + 2];
        System.arraycopy(body, 0, out, 0, peek.modelStart());
        int at = peek.modelStart();
        out[at++] = '"';
        System.arraycopy(value, 0, out, at, value.length);
        at += value.length;
        out[at++] = '"';
        System.arraycopy(body, peek.modelEnd(), out, at, body.length - peek.modelEnd());
        return out;
    }

    /**
     * @return whether {@code s} is printable ASCII without {@code "} or {@code \}: its JSON literal is then the
     *         string between two quotes, one byte per char, with nothing to escape
     */
    private static boolean isPlainAscii(String s)
    {
        for (int i = 0; i < s.length(); i++)
        {
            char c = s.charAt(i);
            if (c < 0x20 || c > 0x7E || c == '"' || c == '\\')
                return false;
        }
        return true;
    }
}
