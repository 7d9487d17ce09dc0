package dev.sluice.plugin.guard;

import com.fasterxml.jackson.databind.JsonNode;
import dev.sluice.api.binding.BindingConfig;
import dev.sluice.api.binding.BindingContext;
import dev.sluice.api.binding.BindingConfig.BindingKind;
import dev.sluice.api.config.ConfigException;
import dev.sluice.api.exchange.Next;
import dev.sluice.api.upstream.Upstream;
import dev.sluice.api.upstream.UpstreamOptions;
import dev.sluice.support.json.Json;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import dev.sluice.api.model.Message.Role;

/** Config validation of {@code guard} bindings: every mistake names its path. */
class GuardFactoryTest
{
    /** What {@code sluice check} offers: services that must not be used, an exit. */
    private static final class CheckContext implements BindingContext
    {
        @Override
        public Next exit(String bindingName)
        {
            return exchange -> CompletableFuture.failedFuture(new AssertionError("not called"));
        }

        @Override
        public Upstream upstream(UpstreamOptions options)
        {
            throw new AssertionError("no upstream");
        }

        @Override
        public String env(String name)
        {
            return null;
        }

        @Override
        public boolean checkOnly()
        {
            return true;
        }
    }

    private static void create(String optionsJson)
    {
        JsonNode options;
        try
        {
            options = Json.MAPPER.readTree(optionsJson);
        }
        catch (IOException e)
        {
            throw new UncheckedIOException(e);
        }
        new GuardFactory().create(new BindingConfig("g", "guard", BindingKind.PROXY, options, "next", List.of()),
            new CheckContext());
    }

    private static void assertFails(String optionsJson, String message)
    {
        assertThatThrownBy(() -> create(optionsJson)).isInstanceOf(ConfigException.class).hasMessageStartingWith(message);
    }

    @Test
    void acceptsAFullConfigWithoutSideEffectsUnderCheck()
    {
        create("{\"mode\":\"report\",\"models\":[\"gpt-*\"],\"hold_back\":64,\"deny\":{\"names\":[\"(?i)falcon\"]},"
            + "\"request\":[{\"rule\":\"card\",\"action\":\"block\"},{\"rule\":\"names\",\"action\":\"redact\"}],"
            + "\"response\":[{\"rule\":\"email\",\"action\":\"redact\"}]}");
    }

    @Test
    void namesAnUnknownRuleAndListsTheKnownOnes()
    {
        assertFails("{\"request\":[{\"rule\":\"emial\",\"action\":\"block\"}]}",
            "bindings.g.options.request[0].rule: value: \"emial\" (expected: one of: api_key, card, email, iban, phone)");
    }

    @Test
    void namesAnUnknownAction()
    {
        assertFails("{\"response\":[{\"rule\":\"email\",\"action\":\"mask\"}]}",
            "bindings.g.options.response[0].action: value: \"mask\" (expected: block or redact)");
    }

    @Test
    void namesARegexThatDoesNotCompile()
    {
        assertFails("{\"deny\":{\"names\":[\"ok\",\"(unclosed\"]},\"request\":[{\"rule\":\"names\",\"action\":\"block\"}]}",
            "bindings.g.options.deny.names[1]: not a valid regular expression");
    }

    @Test
    void refusesADenyListNamedLikeADetector()
    {
        assertFails("{\"deny\":{\"email\":[\"x\"]},\"request\":[{\"rule\":\"email\",\"action\":\"block\"}]}",
            "bindings.g.options.deny.email: a deny list may not take the name of a built-in detector");
    }

    @Test
    void refusesTheSameRuleTwiceInOneDirection()
    {
        assertFails("{\"request\":[{\"rule\":\"card\",\"action\":\"block\"},{\"rule\":\"card\",\"action\":\"redact\"}]}",
            "bindings.g.options.request[1].rule: value: \"card\" (expected: each rule once per direction)");
    }

    @Test
    void refusesABadModeWindowOrKey()
    {
        assertFails("{\"mode\":\"audit\",\"request\":[{\"rule\":\"card\",\"action\":\"block\"}]}",
            "bindings.g.options.mode: value: \"audit\" (expected: enforce or report)");
        assertFails("{\"hold_back\":-1,\"request\":[{\"rule\":\"card\",\"action\":\"block\"}]}",
            "bindings.g.options.hold_back: value: -1");
        assertFails("{\"requests\":[]}", "bindings.g.options.requests: unknown key");
        assertFails("{}", "bindings.g.options: no rules");
    }

    @Test
    void leavesARequestWithNoMatchAsItIs()
    {
        // A guard with request rules only never asks for a canonical reply: see GuardBinding; here the scan alone.
        RuleSet rules = new RuleSet(List.of(new Rule("email", Rule.Direction.REQUEST,
            new Detector[] {Detector.BUILT_IN.get("email")}, Rule.Action.REDACT)), false);
        assertThat(rules.apply(new dev.sluice.api.model.ChatRequest("m", List.of(), List.of(
            dev.sluice.api.model.Message.text(Role.USER, "hello")), List.of(), null, null, null, null,
            false, false, null, null, null))).isNull();
    }
}
