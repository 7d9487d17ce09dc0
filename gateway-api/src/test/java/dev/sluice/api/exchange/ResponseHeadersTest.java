package dev.sluice.api.exchange;

import dev.sluice.api.ErrorKind;
import dev.sluice.api.GatewayException;
import dev.sluice.api.model.ChatResponse;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import dev.sluice.api.model.ChatResponse.StopReason;

class ResponseHeadersTest
{
    @Test
    void keepsOrderAndRepeatsAndLooksUpIgnoringCase()
    {
        ResponseHeaders h = ResponseHeaders.of("X-Cache", "HIT").with("link", "<a>").with("Link", "<b>");
        assertThat(h.size()).isEqualTo(3);
        assertThat(h.name(0)).isEqualTo("x-cache");
        assertThat(h.get("x-CACHE")).isEqualTo("HIT");
        assertThat(h.get("link")).isEqualTo("<a>");
        assertThat(h.get("absent")).isNull();
        List<String> seen = new ArrayList<>();
        h.forEach((n, v) -> seen.add(n + "=" + v));
        assertThat(seen).containsExactly("x-cache=HIT", "link=<a>", "link=<b>");
        assertThat(h.without("LINK")).isEqualTo(ResponseHeaders.of("x-cache", "HIT"));
        assertThat(h.toString()).isEqualTo("ResponseHeaders[x-cache, link, link]").doesNotContain("HIT");
    }

    @Test
    void emptyIsSharedAndCombinesForFree()
    {
        ResponseHeaders one = ResponseHeaders.of("x-cache", "MISS");
        assertThat(ResponseHeaders.of()).isSameAs(ResponseHeaders.EMPTY);
        assertThat(ResponseHeaders.EMPTY.withAll(one)).isSameAs(one);
        assertThat(one.withAll(ResponseHeaders.EMPTY)).isSameAs(one);
        assertThat(one.without("other")).isSameAs(one);
        assertThat(one.without("x-cache")).isSameAs(ResponseHeaders.EMPTY);
        assertThat(ResponseHeaders.EMPTY.isEmpty()).isTrue();
    }

    @ParameterizedTest
    @ValueSource(strings = {"Content-Type", "content-length", "content-encoding", "transfer-encoding", "connection",
        "keep-alive", "te", "trailer", "upgrade", "proxy-connection", "proxy-authenticate", "x-request-id", "host",
        "date", "server"})
    void refusesTheNamesTheRuntimeOwns(String name)
    {
        assertThat(ResponseHeaders.isReserved(name)).isTrue();
        assertThatThrownBy(() -> ResponseHeaders.of(name, "x")).isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining(name.toLowerCase());
    }

    @Test
    void refusesPseudoHeadersBadNamesAndInjectedLines()
    {
        assertThat(ResponseHeaders.isReserved(":status")).isTrue();
        assertThatThrownBy(() -> ResponseHeaders.of(":status", "200")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> ResponseHeaders.of("bad name", "x")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> ResponseHeaders.of("", "x")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> ResponseHeaders.of("x-a", "1\r\nset-cookie: a=b"))
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("CR, LF");
        assertThatThrownBy(() -> ResponseHeaders.of("x-a", "1", "x-b")).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void everyReplyCarriesHeadersAndTheOldConstructorsMeanNone()
    {
        ResponseHeaders h = ResponseHeaders.of("x-cache", "HIT");
        Reply.Bytes bytes = new Reply.Bytes(200, "application/json", new byte[0], null);
        assertThat(bytes.headers()).isSameAs(ResponseHeaders.EMPTY);
        assertThat(bytes.withHeaders(h).headers()).isEqualTo(h);
        assertThat(new Reply.Bytes(200, "application/json", new byte[0], null, null).headers()).isSameAs(ResponseHeaders.EMPTY);
        ChatResponse response = new ChatResponse("id", "m", List.of(), StopReason.END_TURN, null, null, 0, null);
        assertThat(new Reply.Message(response).headers()).isSameAs(ResponseHeaders.EMPTY);
        Reply message = new Reply.Message(response).withHeaders(h);
        assertThat(message).isInstanceOf(Reply.Message.class);
        assertThat(message.headers()).isEqualTo(h);
    }

    @Test
    void gatewayExceptionKeepsEverythingButItsHeadersOnWithHeaders()
    {
        GatewayException e = new GatewayException(ErrorKind.RATE_LIMITED, "slow down");
        assertThat(e.headers()).isSameAs(ResponseHeaders.EMPTY);
        GatewayException withRetry = e.withHeaders(ResponseHeaders.of("retry-after", "2"));
        assertThat(withRetry.headers().get("retry-after")).isEqualTo("2");
        assertThat(withRetry.kind()).isEqualTo(ErrorKind.RATE_LIMITED);
        assertThat(withRetry.status()).isEqualTo(429);
        assertThat(withRetry.getMessage()).isEqualTo("slow down");
        assertThat(e.withHeaders(null)).isSameAs(e);
    }
}
