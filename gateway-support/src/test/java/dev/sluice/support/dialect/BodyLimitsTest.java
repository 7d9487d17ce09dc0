package dev.sluice.support.dialect;

import dev.sluice.api.ErrorKind;
import dev.sluice.api.GatewayException;
import dev.sluice.api.binding.BodyLimits;
import dev.sluice.api.binding.ServerBinding.Endpoint;
import dev.sluice.api.config.ConfigException;
import dev.sluice.api.exchange.Reply;
import dev.sluice.api.model.ChatRequest;
import dev.sluice.api.model.Message;
import dev.sluice.api.model.Message.Role;
import dev.sluice.api.testing.TestExchange;
import dev.sluice.support.config.Options;
import dev.sluice.support.json.Json;
import dev.sluice.support.json.JsonPeek;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** {@link BodyLimits} as a server binding's option, counted by {@link JsonPeek} and estimated by {@link DialectServer}. */
class BodyLimitsTest
{
    private static final JsonPeek PEEK = JsonPeek.modelAndStream().requireMessages("messages");

    private static byte[] body(int messages)
    {
        StringBuilder b = new StringBuilder("{\"model\":\"m\",\"messages\":[");
        for (int i = 0; i < messages; i++)
            b.append(i == 0 ? "" : ",").append("{\"role\":\"user\",\"content\":\"hi\"}");
        return b.append("]}").toString().getBytes(StandardCharsets.UTF_8);
    }

    private static DialectServer server(BodyLimits limits)
    {
        return new DialectServer(null, new Endpoint("POST", "/v1/chat"), limits, "messages", PEEK);
    }

    @Test
    void bindsAsAnOptionStrictlyNamingThePath() throws Exception
    {
        ServerOptions o = Options.bind(Json.MAPPER.readTree("{\"limits\":{\"max_messages\":200,\"max_input_tokens\":100000}}"),
            ServerOptions.class, "bindings.north.options");
        assertThat(o.limits()).isEqualTo(new BodyLimits(200, 100_000L));
        assertThat(Options.bind(null, ServerOptions.class, "p").limits()).isEqualTo(BodyLimits.NONE);
        assertThatThrownBy(() -> Options.bind(Json.MAPPER.readTree("{\"limits\":{\"max_mesages\":2}}"), ServerOptions.class,
            "bindings.north.options"))
            .isInstanceOf(ConfigException.class)
            .hasMessageStartingWith("bindings.north.options.limits.max_mesages: unknown key (expected one of: max_input_tokens, "
                + "max_messages)");
        assertThatThrownBy(() -> Options.bind(Json.MAPPER.readTree("{\"path\":\"v1/chat\"}"), ServerOptions.class,
            "bindings.north.options"))
            .isInstanceOf(ConfigException.class)
            .hasMessage("bindings.north.options.path: value: \"v1/chat\" (expected: a path starting with /)");
        assertThatThrownBy(() -> Options.bind(Json.MAPPER.readTree("{\"limits\":{\"max_messages\":0}}"), ServerOptions.class,
            "bindings.north.options"))
            .isInstanceOf(ConfigException.class)
            .hasMessage("bindings.north.options.limits.max_messages: value: 0 (expected: a positive integer)");
    }

    @Test
    void theScanCountsMessagesAgainstTheLimit()
    {
        JsonPeek limited = PEEK.limit(new BodyLimits(3, null));
        assertThat(limited.scan(body(3)).model()).isEqualTo("m");
        assertThatThrownBy(() -> limited.scan(body(4)))
            .isInstanceOfSatisfying(GatewayException.class, e ->
            {
                assertThat(e.kind()).isEqualTo(ErrorKind.INVALID_REQUEST);
                assertThat(e.status()).isEqualTo(400);
                assertThat(e.param()).isEqualTo("messages");
                assertThat(e.code()).isEqualTo("array_above_max_length");
                assertThat(e.getMessage()).isEqualTo(
                    "messages: value: 4 messages (expected: at most 3, this gateway's limits.max_messages)");
            });
        // Without a limit, or with only a token limit, any count passes.
        assertThat(PEEK.limit(null).scan(body(50)).model()).isEqualTo("m");
        assertThat(PEEK.limit(new BodyLimits(null, 10L)).scan(body(50)).model()).isEqualTo("m");
    }

    @Test
    void aMalformedMessageIsReportedBeforeTheCount()
    {
        byte[] body = "{\"model\":\"m\",\"messages\":[{\"content\":\"x\"},{\"role\":\"user\"},{\"role\":\"user\"}]}"
            .getBytes(StandardCharsets.UTF_8);
        assertThatThrownBy(() -> PEEK.limit(new BodyLimits(1, null)).scan(body))
            .hasMessage("messages[0].role: must be set (expected: a string)");
    }

    @Test
    void inputTokensAreEstimatedFromTheDecodedRequestAndNextIsNotCalledOverTheLimit()
    {
        ChatRequest request = new ChatRequest("m", List.of(), List.of(Message.text(Role.USER, "x".repeat(400))), List.of(),
            null, null, null, null, false, false, null, null, null);
        AtomicInteger calls = new AtomicInteger();
        Reply ok = new Reply.Bytes(200, "application/json", new byte[0], null);
        CompletionStage<Reply> over = server(new BodyLimits(null, 100L)).handle(new TestExchange(request, "{}"), e ->
        {
            calls.incrementAndGet();
            return CompletableFuture.completedFuture(ok);
        });
        assertThat(calls).hasValue(0);
        assertThatThrownBy(() -> over.toCompletableFuture().join()).hasCauseInstanceOf(GatewayException.class)
            .hasMessageContaining("messages: value: about 104 input tokens, estimated (expected: at most 100, this gateway's "
                + "limits.max_input_tokens)");

        TestExchange exchange = new TestExchange(request, "{}");
        assertThat(server(new BodyLimits(null, 104L)).handle(exchange, e -> CompletableFuture.completedFuture(ok))
            .toCompletableFuture().join()).isSameAs(ok);
        assertThat(exchange.modified()).as("estimating does not modify the exchange").isFalse();
    }

    @Test
    void withoutATokenLimitNothingIsDecoded()
    {
        TestExchange exchange = new TestExchange("m");
        Reply ok = new Reply.Bytes(200, "application/json", new byte[0], null);
        assertThat(server(new BodyLimits(5, null)).handle(exchange, e -> CompletableFuture.completedFuture(ok))
            .toCompletableFuture().join()).isSameAs(ok);
        assertThat(server(null).handle(exchange, e -> CompletableFuture.completedFuture(ok))
            .toCompletableFuture().join()).isSameAs(ok);
        assertThat(exchange.decodes()).isZero();
    }
}
