package dev.sluice.plugin.openai;

import dev.sluice.api.binding.BindingConfig;
import dev.sluice.api.binding.BindingContext;
import dev.sluice.api.binding.BindingConfig.BindingKind;
import dev.sluice.api.binding.ServerBinding.Endpoint;
import dev.sluice.api.binding.ServerBinding;
import dev.sluice.api.binding.ServerBinding.ModelIn;
import dev.sluice.api.binding.ServerBinding.Operation;
import dev.sluice.api.config.ConfigException;
import dev.sluice.api.exchange.Next;
import dev.sluice.api.upstream.HttpVersion;
import dev.sluice.api.upstream.Upstream;
import dev.sluice.api.upstream.UpstreamOptions;
import dev.sluice.support.config.Options;
import org.junit.jupiter.api.Test;

import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

class OpenAiOptionsTest
{
    private static final String PATH = "bindings.south.options";

    private static OpenAiClientOptions client(String json)
    {
        return Options.bind(Fixtures.tree(json), OpenAiClientOptions.class, PATH);
    }

    @Test
    void clientOptionsHaveDefaults()
    {
        OpenAiClientOptions o = client("{\"url\":\"https://api.openai.com/v1\",\"api_key\":\"sk-test\"}");
        assertThat(o.path()).isEqualTo("/chat/completions");
        assertThat(o.forwardHeaders()).isEmpty();
        assertThat(o.http()).isNull();
    }

    @Test
    void clientOptionsNeverShowTheApiKey()
    {
        assertThat(client("{\"url\":\"https://api.openai.com/v1\",\"api_key\":\"sk-secret-123\"}").toString())
            .doesNotContain("sk-secret-123").contains("apiKey=***");
    }

    @Test
    void apiKeysBindAsAPoolAndNeverShow()
    {
        OpenAiClientOptions o = client("{\"url\":\"http://x/v1\",\"api_keys\":[\"sk-secret-1\",\"sk-secret-2\"]}");
        assertThat(o.apiKeys()).containsExactly("sk-secret-1", "sk-secret-2");
        assertThat(o.apiKey()).isNull();
        assertThat(o.toString()).doesNotContain("sk-secret").contains("apiKey=none, apiKeys=2 keys");
        assertThat(client("{\"url\":\"http://x/v1\",\"api_key\":\"sk-1\"}").apiKeys()).isEmpty();
    }

    @Test
    void apiKeysAreRefusedWithApiKeyEmptyBlankOrRepeatedNamingThePath()
    {
        ConfigException both = catchThrowableOfType(ConfigException.class,
            () -> client("{\"url\":\"http://x/v1\",\"api_key\":\"sk-1\",\"api_keys\":[\"sk-2\"]}"));
        assertThat(both.getMessage()).isEqualTo(PATH + ".api_keys: must not be given with api_key (expected: one key in"
            + " api_key, or several in api_keys)");
        ConfigException empty = catchThrowableOfType(ConfigException.class,
            () -> client("{\"url\":\"http://x/v1\",\"api_keys\":[]}"));
        assertThat(empty.getMessage()).isEqualTo(PATH + ".api_keys: must not be empty (expected: at least one key)");
        ConfigException blank = catchThrowableOfType(ConfigException.class,
            () -> client("{\"url\":\"http://x/v1\",\"api_keys\":[\"sk-1\",\" \"]}"));
        assertThat(blank.getMessage()).isEqualTo(PATH + ".api_keys[1]: must not be blank");
        ConfigException twice = catchThrowableOfType(ConfigException.class,
            () -> client("{\"url\":\"http://x/v1\",\"api_keys\":[\"sk-secret-1\",\"sk-secret-1\"]}"));
        assertThat(twice.getMessage()).isEqualTo(PATH + ".api_keys[1]: the same key as api_keys[0] (expected: each key once)");
    }

    @Test
    void rejectsUnknownKeysNamingThePath()
    {
        ConfigException e = catchThrowableOfType(ConfigException.class,
            () -> client("{\"url\":\"http://x/v1\",\"apikey\":\"k\"}"));
        assertThat(e.path()).isEqualTo(PATH + ".apikey");
        assertThat(e.getMessage()).contains("unknown key");
    }

    @Test
    void refusesToForwardTheClientsCredentials()
    {
        ConfigException e = catchThrowableOfType(ConfigException.class,
            () -> client("{\"url\":\"http://x/v1\",\"forward_headers\":[\"x-request-id\",\"Authorization\"]}"));
        assertThat(e.getMessage())
            .startsWith(PATH + ".forward_headers[1]: value: \"Authorization\" (expected: a header the gateway");
    }

    @Test
    void rejectsARelativePath()
    {
        ConfigException e = catchThrowableOfType(ConfigException.class,
            () -> client("{\"url\":\"http://x/v1\",\"path\":\"chat\"}"));
        assertThat(e.getMessage()).isEqualTo(PATH + ".path: value: \"chat\" (expected: a path starting with /)");
    }

    @Test
    void serverFactoryServesTheConfiguredPath()
    {
        OpenAiServerFactory factory = new OpenAiServerFactory();
        assertThat(factory.type()).isEqualTo("openai");

        ServerBinding binding = factory.create(config(BindingKind.SERVER, "{}"), new RecordingContext());
        assertThat(binding.endpoints()).startsWith(new Endpoint("POST", "/v1/chat/completions"))
            .contains(new Endpoint("POST", "/v1/embeddings", Operation.EMBEDDINGS, ModelIn.BODY));
        assertThat(binding.codec().dialect()).isEqualTo("openai");

        ServerBinding custom = factory.create(config(BindingKind.SERVER, "{\"path\":\"/openai/v1/chat/completions\"}"),
            new RecordingContext());
        assertThat(custom.endpoints()).startsWith(new Endpoint("POST", "/openai/v1/chat/completions"))
            .contains(new Endpoint("POST", "/openai/v1/embeddings", Operation.EMBEDDINGS, ModelIn.BODY));
    }

    @Test
    void clientFactoryAsksForOneUpstreamWithTheHttpSettings()
    {
        RecordingContext context = new RecordingContext();
        new OpenAiClientFactory().create(config(BindingKind.CLIENT,
            "{\"url\":\"http://127.0.0.1:9/v1/\",\"http\":{\"version\":\"h2c\",\"first_byte_timeout\":\"30s\"}}"), context);

        assertThat(context.requested).hasSize(1);
        UpstreamOptions o = context.requested.get(0);
        assertThat(o.baseUrl()).isEqualTo(URI.create("http://127.0.0.1:9/v1"));
        assertThat(o.version()).isEqualTo(HttpVersion.H2C);
        assertThat(o.firstByteTimeout()).isEqualTo(Duration.ofSeconds(30));
    }

    @Test
    void clientFactoryRejectsAMissingUrl()
    {
        ConfigException e = catchThrowableOfType(ConfigException.class,
            () -> new OpenAiClientFactory().create(config(BindingKind.CLIENT, "{\"api_key\":\"k\"}"), new RecordingContext()));
        assertThat(e.path()).isEqualTo("bindings.south.options.url");
    }

    private static BindingConfig config(BindingKind kind, String options)
    {
        return new BindingConfig("south", "openai", kind, Fixtures.tree(options), null, List.of());
    }

    /** The runtime's side of binding creation, reduced to what a factory asks for. */
    private static final class RecordingContext implements BindingContext
    {
        private final List<UpstreamOptions> requested = new ArrayList<>();

        @Override
        public Next exit(String bindingName)
        {
            throw new ConfigException("exit", "none in this test");
        }

        @Override
        public Upstream upstream(UpstreamOptions options)
        {
            requested.add(options);
            return null;
        }

        @Override
        public String env(String name)
        {
            return null;
        }
    }
}
