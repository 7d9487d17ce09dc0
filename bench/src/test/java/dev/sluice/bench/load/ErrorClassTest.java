package dev.sluice.bench.load;

import java.io.EOFException;
import java.net.ConnectException;
import java.net.SocketTimeoutException;
import java.nio.channels.AsynchronousCloseException;
import java.util.Arrays;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeoutException;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class ErrorClassTest
{
    @Test
    void keysAreTheSpecErrorClassesInOrder()
    {
        assertThat(Arrays.stream(ErrorClass.values()).map(ErrorClass::key)).containsExactlyElementsOf(LoadSpec.ERROR_CLASSES);
    }

    @Test
    void aTimeoutAnywhereInTheChainIsATimeoutEvenAfterTheHeaders()
    {
        assertThat(ErrorClass.classify(new TimeoutException("Total timeout 10000 ms elapsed"), false))
            .isEqualTo(ErrorClass.TIMEOUT);
        assertThat(ErrorClass.classify(new ExecutionException(new TimeoutException("Idle timeout")), true))
            .isEqualTo(ErrorClass.TIMEOUT);
    }

    @Test
    void aRefusedOrTimedOutConnectIsConnect()
    {
        assertThat(ErrorClass.classify(new ConnectException("Connection refused"), false)).isEqualTo(ErrorClass.CONNECT);
        assertThat(ErrorClass.classify(new SocketTimeoutException("Connect Timeout"), false)).isEqualTo(ErrorClass.CONNECT);
    }

    @Test
    void aFailureAfterTheHeadersIsABrokenBodyAndBeforeThemOther()
    {
        assertThat(ErrorClass.classify(new EOFException(), true)).isEqualTo(ErrorClass.BROKEN_BODY);
        assertThat(ErrorClass.classify(new AsynchronousCloseException(), false)).isEqualTo(ErrorClass.OTHER);
    }
}
