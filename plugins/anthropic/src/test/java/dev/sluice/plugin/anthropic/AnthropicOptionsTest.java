package dev.sluice.plugin.anthropic;

import dev.sluice.api.binding.BindingConfig;
import dev.sluice.api.binding.BindingContext;
import dev.sluice.api.binding.BindingConfig.BindingKind;
import dev.sluice.api.binding.ServerBinding.Endpoint;
import dev.sluice.api.binding.ServerBinding.ModelIn;
import dev.sluice.api.binding.ServerBinding.Operation;
import dev.sluice.api.binding.ServerBinding;
import dev.sluice.api.config.ConfigException;
import dev.sluice.api.exchange.Next;
import dev.sluice.api.testing.TestBindingContext;
import dev.sluice.api.testing.TestExchange;
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

class AnthropicOptionsTest
{
    private static final String PATH = "bindings.south.options";

    private static AnthropicClientOptions client(String json)
    {
        return Options.bind(Fixtures.tree(json), AnthropicClientOptions.class, PATH);
    }

    private static ConfigException clientFails(String json)
    {
        return catchThrowableOfType(ConfigException.class, () -> client(json));
    }

    @Test
    void clientOptionsHaveDefaults()
    {
        AnthropicClientOptions o = client("{\"url\":\"https://api.anthropic.com/v1\",\"api_key\":\"sk-ant-test\"}");
        assertThat(o.path()).isEqualTo("/messages");
        assertThat(o.anthropicVersion()).isEqualTo("2023-06-01");
        assertThat(o.defaultMaxTokens()).isEqualTo(4096);
        assertThat(o.forwardHeaders()).containsExactly("anthropic-beta");
        assertThat(o.dropUnsupported()).isEmpty();
        assertThat(o.http()).isNull();
    }

    @Test
    void clientOptionsBindEveryField()
    {
        AnthropicClientOptions o = client("{\"url\":\"http://127.0.0.1:9/v1\",\"api_key\":\"k\","
            + "\"anthropic_version\":\"2024-01-01\","
            + "\"default_max_tokens\":8192,\"forward_headers\":[],\"drop_unsupported\":[\"store\",\"seed\"],"
            + "\"http\":{\"version\":\"h2c\"},\"path\":\"/anthropic/messages\"}");
        assertThat(o.anthropicVersion()).isEqualTo("2024-01-01");
        assertThat(o.defaultMaxTokens()).isEqualTo(8192);
        assertThat(o.forwardHeaders()).isEmpty();
        assertThat(o.dropUnsupported()).containsExactly("store", "seed");
        assertThat(o.http().version()).isEqualTo("h2c");
        assertThat(o.path()).isEqualTo("/anthropic/messages");
    }

    @Test
    void clientOptionsNeverShowTheApiKey()
    {
        assertThat(client("{\"url\":\"https://api.anthropic.com/v1\",\"api_key\":\"sk-ant-secret-123\"}").toString())
            .doesNotContain("sk-ant-secret-123").contains("apiKey=***");
    }

    @Test
    void apiKeysBindAsAPoolAndNeverShow()
    {
        AnthropicClientOptions o = client("{\"url\":\"http://x/v1\",\"api_keys\":[\"sk-ant-secret-1\",\"sk-ant-secret-2\"]}");
        assertThat(o.apiKeys()).containsExactly("sk-ant-secret-1", "sk-ant-secret-2");
        assertThat(o.apiKey()).isNull();
        assertThat(o.toString()).doesNotContain("sk-ant-secret").contains("apiKey=none, apiKeys=2 keys");
        assertThat(client("{\"url\":\"http://x/v1\",\"api_key\":\"sk-ant-1\"}").apiKeys()).isEmpty();
    }

    @Test
    void apiKeysAreRefusedWithApiKeyEmptyBlankOrRepeatedNamingThePath()
    {
        ConfigException both = catchThrowableOfType(ConfigException.class,
            () -> client("{\"url\":\"http://x/v1\",\"api_key\":\"sk-ant-1\",\"api_keys\":[\"sk-ant-2\"]}"));
        assertThat(both.getMessage()).isEqualTo(PATH + ".api_keys: must not be given with api_key (expected: one key in"
            + " api_key, or several in api_keys)");
        ConfigException empty = catchThrowableOfType(ConfigException.class,
            () -> client("{\"url\":\"http://x/v1\",\"api_keys\":[]}"));
        assertThat(empty.getMessage()).isEqualTo(PATH + ".api_keys: must not be empty (expected: at least one key)");
        ConfigException blank = catchThrowableOfType(ConfigException.class,
            () -> client("{\"url\":\"http://x/v1\",\"api_keys\":[\"sk-ant-1\",\" \"]}"));
        assertThat(blank.getMessage()).isEqualTo(PATH + ".api_keys[1]: must not be blank");
        ConfigException twice = catchThrowableOfType(ConfigException.class,
            () -> client("{\"url\":\"http://x/v1\",\"api_keys\":[\"sk-ant-secret-1\",\"sk-ant-secret-1\"]}"));
        assertThat(twice.getMessage()).isEqualTo(PATH + ".api_keys[1]: the same key as api_keys[0] (expected: each key once)");
    }

    @Test
    void rejectsTyposNamingThePath()
    {
        ConfigException e = clientFails("{\"url\":\"http://x/v1\",\"apikey\":\"k\"}");
        assertThat(e.path()).isEqualTo(PATH + ".apikey");
        assertThat(e.getMessage()).contains("unknown key");
        ConfigException nested = clientFails("{\"url\":\"http://x/v1\",\"http\":{\"verson\":\"h2c\"}}");
        assertThat(nested.path()).isEqualTo(PATH + ".http.verson");
    }

    @Test
    void rejectsWrongValuesNamingThePath()
    {
        assertThat(clientFails("{\"url\":\"http://x/v1\",\"default_max_tokens\":0}").getMessage())
            .isEqualTo(PATH + ".default_max_tokens: value: 0 (expected: > 0)");
        assertThat(clientFails("{\"url\":\"http://x/v1\",\"default_max_tokens\":\"lots\"}").path())
            .isEqualTo(PATH + ".default_max_tokens");
        assertThat(clientFails("{\"url\":\"http://x/v1\",\"path\":\"messages\"}").getMessage())
            .isEqualTo(PATH + ".path: value: \"messages\" (expected: a path starting with /)");
    }

    @Test
    void refusesToForwardCredentialsFramingOrTheApiVersion()
    {
        for (String header : new String[]{"x-api-key", "Authorization", "anthropic-version", "Content-Length"})
        {
            ConfigException e = clientFails("{\"url\":\"http://x/v1\","
                + "\"forward_headers\":[\"anthropic-beta\",\"" + header + "\"]}");
            assertThat(e.getMessage()).as(header)
                .startsWith(PATH + ".forward_headers[1]: value: \"" + header + "\" (expected: a header the gateway");
        }
    }

    @Test
    void clientFactoryAsksForOneUpstreamWithTheHttpSettings()
    {
        RecordingContext context = new RecordingContext();
        AnthropicClientFactory factory = new AnthropicClientFactory();
        assertThat(factory.type()).isEqualTo("anthropic");

        factory.create(config(BindingKind.CLIENT,
            "{\"url\":\"http://127.0.0.1:9/v1/\",\"http\":{\"version\":\"h2c\",\"first_byte_timeout\":\"30s\"}}"),
            context);

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
            () -> new AnthropicClientFactory().create(config(BindingKind.CLIENT, "{\"api_key\":\"k\"}"),
            new RecordingContext()));
        assertThat(e.path()).isEqualTo("bindings.south.options.url");
    }

    @Test
    void serverFactoryServesTheConfiguredPath()
    {
        AnthropicServerFactory factory = new AnthropicServerFactory();
        assertThat(factory.type()).isEqualTo("anthropic");

        ServerBinding binding = factory.create(config(BindingKind.SERVER, "{}"), new TestBindingContext());
        assertThat(binding.endpoints()).containsExactly(new Endpoint("POST", "/v1/messages"),
            new Endpoint("POST", "/v1/messages/count_tokens", Operation.COUNT_TOKENS, ModelIn.BODY),
            new Endpoint("GET", "/v1/models", Operation.LIST_MODELS, ModelIn.NONE).whenHeader("anthropic-version"),
            new Endpoint("GET", "/v1/models/*", Operation.GET_MODEL, ModelIn.PATH).whenHeader("anthropic-version"));
        assertThat(binding.codec()).isSameAs(AnthropicCodec.INSTANCE);

        ServerBinding custom = factory.create(config(BindingKind.SERVER, "{\"path\":\"/anthropic/v1/messages\"}"),
            new TestBindingContext());
        // The count and the listings move with the path.
        assertThat(custom.endpoints()).extracting(Endpoint::path).containsExactly("/anthropic/v1/messages",
            "/anthropic/v1/messages/count_tokens", "/anthropic/v1/models", "/anthropic/v1/models/*");

        ConfigException typo = catchThrowableOfType(ConfigException.class,
            () -> factory.create(config(BindingKind.SERVER, "{\"paht\":\"/x\"}"), new TestBindingContext()));
        assertThat(typo.path()).isEqualTo("bindings.south.options.paht");
    }

    @Test
    void serverFindsTheClientKeyInXApiKeyThenInABearerToken()
    {
        ServerBinding server = new AnthropicServerFactory().create(config(BindingKind.SERVER, "{}"),
            new TestBindingContext());

        TestExchange both = new TestExchange("m").header("x-api-key", "sk-virtual-1").header("Authorization",
            "Bearer other");
        assertThat(server.clientKey(both.headers(), null)).isEqualTo("sk-virtual-1");
        TestExchange bearer = new TestExchange("m").header("Authorization", "Bearer sk-virtual-2");
        assertThat(server.clientKey(bearer.headers(), null)).isEqualTo("sk-virtual-2");
        TestExchange blank = new TestExchange("m").header("X-Api-Key", "  ");
        assertThat(server.clientKey(blank.headers(), null)).isNull();
        assertThat(server.clientKey(new TestExchange("m").headers(), null)).isNull();
    }

    private static BindingConfig config(BindingKind kind, String options)
    {
        return new BindingConfig("south", "anthropic", kind, Fixtures.tree(options), null, List.of());
    }

    /** The runtime's side of binding creation, reduced to what a client factory asks for. */
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
