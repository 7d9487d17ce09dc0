package dev.sluice.plugin.guard;

import dev.sluice.api.ErrorKind;
import dev.sluice.api.GatewayException;
import dev.sluice.api.model.Embeddings;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** {@link RuleSet#apply(Embeddings.Request)}: every input is one whole text; the rest of the request is kept. */
class RuleSetEmbeddingsTest
{
    private static Rule rule(String detector, Rule.Action action)
    {
        return new Rule(detector, Rule.Direction.REQUEST, new Detector[] {Detector.BUILT_IN.get(detector)}, action);
    }

    private static RuleSet rules(boolean report)
    {
        return new RuleSet(List.of(rule("email", Rule.Action.REDACT), rule("card", Rule.Action.BLOCK)), report);
    }

    private static Embeddings.Request request(String... inputs)
    {
        return new Embeddings.Request("emb", List.of(inputs), 64, Embeddings.Format.BASE64, "user-1");
    }

    @Test
    void redactsOnlyTheInputsThatMatchAndKeepsTheRestOfTheRequest()
    {
        Embeddings.Request redacted = rules(false).apply(request("a cat", "mail jane@example.com now", "a dog"));

        assertThat(redacted.inputs()).containsExactly("a cat", "mail [REDACTED:email] now", "a dog");
        assertThat(redacted.model()).isEqualTo("emb");
        assertThat(redacted.dimensions()).isEqualTo(64);
        assertThat(redacted.format()).isEqualTo(Embeddings.Format.BASE64);
        assertThat(redacted.user()).isEqualTo("user-1");
    }

    @Test
    void aCleanRequestStaysAsItIs()
    {
        assertThat(rules(false).apply(request("a cat", "a dog"))).isNull();
    }

    @Test
    void aBlockingMatchInAnyInputRefusesTheRequest()
    {
        assertThatThrownBy(() -> rules(false).apply(request("a cat", "card 4111 1111 1111 1111")))
            .isInstanceOfSatisfying(GatewayException.class, e ->
            {
                assertThat(e.kind()).isEqualTo(ErrorKind.GUARDRAIL_BLOCKED);
                assertThat(e.getMessage()).isEqualTo("content blocked by the guard: rule card matched in the request");
            });
    }

    @Test
    void reportModeCountsEveryHitAndChangesNothing()
    {
        Rule email = rule("email", Rule.Action.REDACT);
        Rule card = rule("card", Rule.Action.BLOCK);
        RuleSet report = new RuleSet(List.of(email, card), true);

        assertThat(report.apply(request("jane@example.com", "4111 1111 1111 1111", "bob@example.org"))).isNull();
        assertThat(email.hits()).isEqualTo(2);
        assertThat(card.hits()).isEqualTo(1);
    }
}
