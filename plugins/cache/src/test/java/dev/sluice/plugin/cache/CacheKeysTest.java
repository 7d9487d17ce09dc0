package dev.sluice.plugin.cache;

import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.sluice.api.model.ChatRequest;
import dev.sluice.api.model.ContentPart;
import dev.sluice.api.model.Message;
import dev.sluice.api.model.Message.Role;
import dev.sluice.api.model.ChatRequest.Sampling;
import dev.sluice.api.model.Tool;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class CacheKeysTest
{
    private static final CacheKeys KEYS = new CacheKeys(List.of());

    private static ChatRequest request(String text, Sampling sampling, String user, List<Tool> tools, boolean stream)
    {
        return new ChatRequest("m", List.of(), List.of(new Message(Role.USER, List.of(new ContentPart.Text(text, null)), null)),
            tools, null, null, sampling, null, stream, stream, user, Map.of(), Map.of());
    }

    private static Sampling maxTokens(int n)
    {
        return new Sampling(null, null, null, n, null, null, null, null);
    }

    @Test
    void theSameRequestGivesTheSameKeyWhateverTheStreamFlagAndPromptCacheHints()
    {
        ChatRequest plain = request("hello", maxTokens(10), null, List.of(), false);
        ChatRequest streamed = request("hello", maxTokens(10), null, List.of(), true);
        ChatRequest hinted = new ChatRequest("other-model-name", List.of(), List.of(new Message(Role.USER,
            List.of(new ContentPart.Text("hello", JsonNodeFactory.instance.objectNode().put("type", "ephemeral"))), null)),
            List.of(), null, null, maxTokens(10), null, false, false, null, Map.of(), Map.of());
        assertThat(KEYS.key("t", "m", streamed)).isEqualTo(KEYS.key("t", "m", plain));
        assertThat(KEYS.key("t", "m", hinted)).as("the target model is the key's, the request's own model is not")
            .isEqualTo(KEYS.key("t", "m", plain));
    }

    @Test
    void anythingTheProviderSeesChangesTheKey()
    {
        CacheKeys.Key base = KEYS.key("t", "m", request("hello", maxTokens(10), null, List.of(), false));
        assertThat(KEYS.key("t", "m", request("hello!", maxTokens(10), null, List.of(), false))).isNotEqualTo(base);
        assertThat(KEYS.key("t", "m", request("hello", maxTokens(11), null, List.of(), false))).isNotEqualTo(base);
        assertThat(KEYS.key("t", "m", request("hello", maxTokens(10), "u", List.of(), false))).isNotEqualTo(base);
        assertThat(KEYS.key("t", "m2", request("hello", maxTokens(10), null, List.of(), false))).isNotEqualTo(base);
        assertThat(KEYS.key("t2", "m", request("hello", maxTokens(10), null, List.of(), false)))
            .as("another tenant").isNotEqualTo(base);
        ObjectNode schema = JsonNodeFactory.instance.objectNode().put("type", "object");
        assertThat(KEYS.key("t", "m", request("hello", maxTokens(10), null,
            List.of(new Tool("f", "d", schema, null, null)), false))).isNotEqualTo(base);
    }

    @Test
    void ignoredFieldsAreLeftOut()
    {
        CacheKeys ignoring = new CacheKeys(List.of("user"));
        assertThat(ignoring.key("t", "m", request("hello", maxTokens(10), "alice", List.of(), false)))
            .isEqualTo(ignoring.key("t", "m", request("hello", maxTokens(10), "bob", List.of(), false)));
    }

    @Test
    void objectKeyOrderInSchemasDoesNotMatter()
    {
        ObjectNode a = JsonNodeFactory.instance.objectNode().put("type", "object").put("title", "x");
        ObjectNode b = JsonNodeFactory.instance.objectNode().put("title", "x").put("type", "object");
        assertThat(KEYS.key("t", "m", request("q", null, null, List.of(new Tool("f", "d", a, null, null)), false)))
            .isEqualTo(KEYS.key("t", "m", request("q", null, null, List.of(new Tool("f", "d", b, null, null)), false)));
    }

    @Test
    void aCredentialTenantIsItsHashNotTheCredential()
    {
        assertThat(CacheKeys.credentialTenant("sk-secret")).doesNotContain("sk-secret").startsWith("credential:")
            .hasSize("credential:".length() + 64);
    }
}
