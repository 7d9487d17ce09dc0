package dev.sluice.runtime.internal.http;

import dev.sluice.api.ErrorKind;
import dev.sluice.api.GatewayException;
import dev.sluice.api.codec.DialectCodec;
import dev.sluice.api.codec.StreamEncoder;
import dev.sluice.api.exchange.Reply;
import dev.sluice.runtime.internal.chain.DefaultExchange;
import org.eclipse.jetty.http.HttpField;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.PreEncodedHttpField;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/**
 * Writes the answer to a chat request in the client's dialect: a reply's bytes as they are, a canonical message
 * encoded by the server binding's codec, a stream through a {@link StreamPump}, or an error. Each answer is one
 * terminal write that carries the request's {@link CompletionRecord} as its callback, so the request ends in one place.
 * One per gateway handler; it keeps no per-request state (that is in the record).
 */
final class ReplyWriter
{
    private static final Logger LOG = LoggerFactory.getLogger(ReplyWriter.class);
    static final HttpField JSON = new PreEncodedHttpField(HttpHeader.CONTENT_TYPE, "application/json");
    private static final HttpField NO_CACHE = new PreEncodedHttpField(HttpHeader.CACHE_CONTROL, "no-cache");
    private static final byte[] CODEC_FAILED =
        "{\"error\":{\"message\":\"internal gateway error\"}}".getBytes(StandardCharsets.UTF_8);

    private final Redaction redaction;

    /** @param redaction what is cut out of every error message before it reaches the client, a log or a listener */
    ReplyWriter(Redaction redaction)
    {
        this.redaction = redaction;
    }

    /** Writes {@code json} as the whole response, with {@code status}. */
    static void writeJson(Response response, Callback callback, int status, byte[] json)
    {
        response.setStatus(status);
        response.getHeaders().add(JSON);
        response.write(true, ByteBuffer.wrap(json), callback);
    }

    /** Writes the chain's {@code reply} to {@code record}'s client; a failure to write it becomes an error answer. */
    void write(CompletionRecord record, Reply reply)
    {
        Response response = record.response;
        try
        {
            if (reply instanceof Reply.Bytes bytes)
            {
                response.setStatus(bytes.status());
                ReplyHeaders.add(response.getHeaders(), bytes.headers());
                response.getHeaders().put(HttpHeader.CONTENT_TYPE, bytes.contentType());
                response.getHeaders().put(HttpHeader.CONTENT_LENGTH, bytes.body().length);
                record.answered(bytes.body().length);
                response.write(true, ByteBuffer.wrap(bytes.body()), record);
            }
            else if (reply instanceof Reply.Message message)
            {
                byte[] encoded = record.codec().encodeResponse(message.response());
                response.setStatus(200);
                ReplyHeaders.add(response.getHeaders(), message.headers());
                response.getHeaders().add(JSON);
                response.getHeaders().put(HttpHeader.CONTENT_LENGTH, encoded.length);
                record.answered(encoded.length);
                response.write(true, ByteBuffer.wrap(encoded), record);
            }
            else if (reply instanceof Reply.Stream stream)
            {
                DefaultExchange exchange = record.defaultExchange();
                StreamEncoder encoder = record.codec().newStreamEncoder(exchange::request);
                response.setStatus(200);
                ReplyHeaders.add(response.getHeaders(), stream.headers());
                response.getHeaders().put(HttpHeader.CONTENT_TYPE, encoder.contentType());
                response.getHeaders().put(NO_CACHE);
                new StreamPump(record.id(), stream.events(), encoder, response, record, error -> writeError(record, error),
                    record, redaction).iterate();
            }
        }
        catch (Throwable t)
        {
            fail(record, t);
        }
    }

    /**
     * Answers {@code failure} in the client's dialect, or, once the response is committed, fails the request's
     * callback so that the client sees an abnormal end. An internal error is logged with the request id.
     */
    void fail(CompletionRecord record, Throwable failure)
    {
        GatewayException error = redaction.scrub(GatewayException.of(failure));
        if (error.kind() == ErrorKind.INTERNAL)
            LOG.error("request {}: internal error", record.id(), failure);
        else if (LOG.isDebugEnabled())
            LOG.debug("G2C {} {} {}", record.id(), error.status(), error.getMessage());
        if (record.response.isCommitted())
        {
            record.failed(error);
            return;
        }
        writeError(record, error);
    }

    /** Writes {@code failure} as the whole response; also reached from a stream that failed before its first byte. */
    private void writeError(CompletionRecord record, GatewayException failure)
    {
        GatewayException error = redaction.scrub(failure);
        record.error(error);
        DialectCodec codec = record.codec();
        byte[] bytes;
        try
        {
            bytes = codec.encodeError(error);
        }
        catch (Throwable t)
        {
            LOG.error("request {}: the {} codec failed to render an error", record.id(), codec.dialect(), t);
            bytes = CODEC_FAILED;
        }
        Response response = record.response;
        response.setStatus(error.status());
        ReplyHeaders.add(response.getHeaders(), error.headers());
        response.getHeaders().put(HttpHeader.CONTENT_TYPE, "application/json");
        response.getHeaders().put(HttpHeader.CONTENT_LENGTH, bytes.length);
        record.answered(bytes.length);
        response.write(true, ByteBuffer.wrap(bytes), record);
    }
}
