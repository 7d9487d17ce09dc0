package dev.sluice.support.upstream;

import dev.sluice.api.upstream.UpstreamResponse;
import dev.sluice.api.upstream.BodySource;
import dev.sluice.api.ErrorKind;
import dev.sluice.api.GatewayException;
import dev.sluice.api.testing.TestBody;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.util.Arrays;
import java.util.concurrent.CompletionException;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class BodiesTest
{
    private TestBody body;

    @AfterEach
    void everyChunkReleasedExactlyOnce()
    {
        if (body != null)
            body.assertAllReleasedOnce();
    }

    private static byte[] bytes(int n)
    {
        byte[] bytes = new byte[n];
        for (int i = 0; i < n; i++)
            bytes[i] = (byte)('a' + i % 26);
        return bytes;
    }

    private static byte[] slice(byte[] bytes, int from, int to)
    {
        return Arrays.copyOfRange(bytes, from, to);
    }

    private static byte[] done(Bodies.Reader reader)
    {
        assertThat(reader.result).isDone();
        return reader.result.join();
    }

    @Test
    void aDeclaredLengthIsReadIntoOneArrayOfExactlyThatSize()
    {
        byte[] answer = bytes(370);
        // As jetty-client delivers an HTTP/1.1 body with Content-Length: data chunks, then an empty last one.
        body = TestBody.of(slice(answer, 0, 100), slice(answer, 100, 370), new byte[0]);

        Bodies.Reader reader = Bodies.read(body, 370, UpstreamReplies.MAX_RESPONSE_BYTES, false, false);

        assertThat(done(reader)).isEqualTo(answer).hasSize(370);
        assertThat(reader.allocations()).as("one array, of the declared size, and no trim").isEqualTo(1);
    }

    @Test
    void aWholeBodyInOneLastChunkIsCopiedOnce()
    {
        byte[] answer = bytes(370);
        body = TestBody.of(answer);

        Bodies.Reader reader = Bodies.read(body, -1, UpstreamReplies.MAX_RESPONSE_BYTES, false, false);

        assertThat(done(reader)).isEqualTo(answer);
        assertThat(reader.allocations()).isEqualTo(1);
    }

    @Test
    void aBodyOfUnknownLengthInOneChunkBeforeTheEmptyLastOneIsCopiedOnce()
    {
        byte[] answer = bytes(370);
        // As jetty-client delivers a small chunked HTTP/1.1 answer: one data chunk, then the empty last one.
        body = TestBody.of(answer, new byte[0]);

        Bodies.Reader reader = Bodies.read(body, -1, UpstreamReplies.MAX_RESPONSE_BYTES, false, false);

        assertThat(done(reader)).isEqualTo(answer);
        assertThat(reader.allocations()).isEqualTo(1);
    }

    @Test
    void aBodyOfUnknownLengthInManyChunksIsReturnedExact()
    {
        byte[] answer = bytes(10_000);
        body = TestBody.split(answer, 3000);

        byte[] read = Bodies.readAll(body, UpstreamReplies.MAX_RESPONSE_BYTES).toCompletableFuture().join();

        assertThat(read).isEqualTo(answer);
        assertThat(body.failure()).isNull();
    }

    @Test
    void aBodyShorterThanDeclaredIsReturnedWithoutTrailingGarbage()
    {
        byte[] answer = bytes(60);
        body = TestBody.of(slice(answer, 0, 30), slice(answer, 30, 60), new byte[0]);

        byte[] read = Bodies.readAll(body, 100, 1000).toCompletableFuture().join();

        assertThat(read).isEqualTo(answer).hasSize(60);
    }

    @Test
    void aBodyLongerThanDeclaredIsReturnedWhole()
    {
        byte[] answer = bytes(300);
        body = TestBody.split(answer, 70);

        byte[] read = Bodies.readAll(body, 10, 1000).toCompletableFuture().join();

        assertThat(read).isEqualTo(answer);
    }

    @Test
    void aDeclaredLengthOverTheCapFailsBeforeReadingOrAllocating()
    {
        body = TestBody.of(bytes(10));

        var stage = Bodies.readAll(body, 1001, 1000).toCompletableFuture();

        assertThatThrownBy(stage::join).isInstanceOf(CompletionException.class)
            .cause().isInstanceOf(GatewayException.class).hasMessage("upstream response is larger than 1000 bytes");
        assertThat(body.reads()).as("nothing read").isZero();
        assertThat(body.failure()).as("the upstream is aborted").isInstanceOf(GatewayException.class);
    }

    @Test
    void aBodyRunningPastTheCapFailsWhateverItDeclared()
    {
        body = TestBody.split(bytes(3000), 500);

        var stage = Bodies.readAll(body, 10, 1000).toCompletableFuture();

        assertThatThrownBy(stage::join).cause().isInstanceOf(GatewayException.class)
            .satisfies(e -> assertThat(((GatewayException)e).kind()).isEqualTo(ErrorKind.UPSTREAM_UNAVAILABLE));
        assertThat(body.reads()).as("reading stops at the chunk that crosses the cap").isEqualTo(3);
        assertThat(body.failure()).isNotNull();
    }

    @Test
    void aPrefixStopsAtItsSizeWhateverTheDeclaredLength()
    {
        byte[] answer = bytes(500);
        body = TestBody.split(answer, 40);

        Bodies.Reader reader = Bodies.read(body, 1 << 30, 64, true, false);

        assertThat(done(reader)).isEqualTo(slice(answer, 0, 64));
        assertThat(reader.allocations()).as("sized at the cap, which the body fills").isEqualTo(1);
        assertThat(body.reads()).isEqualTo(2);
        assertThat(body.failure()).as("the rest is not read").isNotNull();
    }

    @Test
    void aPrefixOfABodyShorterThanDeclaredIsWhatArrived()
    {
        byte[] answer = bytes(10);
        body = TestBody.of(answer);

        byte[] read = Bodies.readPrefix(body, 1000, 64).toCompletableFuture().join();

        assertThat(read).isEqualTo(answer);
    }

    @Test
    void anEmptyBodyAllocatesNothing()
    {
        body = TestBody.of(new byte[0]);

        Bodies.Reader reader = Bodies.read(body, 0, 1000, false, false);

        assertThat(done(reader)).isEmpty();
        assertThat(reader.allocations()).isZero();
    }

    @Test
    void aFailedBodyFailsTheReadAndEndsThePrefix()
    {
        GatewayException reset = new GatewayException(ErrorKind.UPSTREAM_UNAVAILABLE, "upstream closed the connection");
        body = TestBody.of(bytes(20)).thenFail(reset);
        assertThatThrownBy(() -> Bodies.readAll(body, 100, 1000).toCompletableFuture().join()).cause().isSameAs(reset);

        body.assertAllReleasedOnce();
        body = TestBody.of(bytes(20)).thenFail(reset);
        assertThat(Bodies.readPrefix(body, 100, 1000).toCompletableFuture().join()).isEqualTo(bytes(20));
    }

    @Test
    void contentLengthIsParsedFromTheHeaderByDefault()
    {
        assertThat(response("370").contentLength()).isEqualTo(370);
        assertThat(response("0").contentLength()).isZero();
        assertThat(response(null).contentLength()).isEqualTo(-1);
        assertThat(response("").contentLength()).isEqualTo(-1);
        assertThat(response("-1").contentLength()).isEqualTo(-1);
        assertThat(response("+5").contentLength()).isEqualTo(-1);
        assertThat(response(" 5").contentLength()).isEqualTo(-1);
        assertThat(response("5, 5").contentLength()).isEqualTo(-1);
        assertThat(response("9223372036854775807").contentLength()).isEqualTo(Long.MAX_VALUE);
        assertThat(response("9223372036854775808").contentLength()).isEqualTo(-1);
        assertThat(response("99999999999999999999").contentLength()).isEqualTo(-1);
    }

    private static UpstreamResponse response(String contentLength)
    {
        return new UpstreamResponse()
        {
            @Override
            public int status()
            {
                return 200;
            }

            @Override
            public String header(String name)
            {
                return "content-length".equals(name) ? contentLength : null;
            }

            @Override
            public BodySource body()
            {
                throw new UnsupportedOperationException();
            }
        };
    }
}
