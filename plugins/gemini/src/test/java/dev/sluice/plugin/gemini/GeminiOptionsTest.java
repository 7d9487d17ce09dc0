package dev.sluice.plugin.gemini;

import dev.sluice.api.binding.BindingConfig;
import dev.sluice.api.binding.BindingContext;
import dev.sluice.api.binding.BindingConfig.BindingKind;
import dev.sluice.api.binding.ServerBinding.Endpoint;
import dev.sluice.api.binding.ServerBinding;
import dev.sluice.api.binding.ServerBinding.ModelIn;
import dev.sluice.api.binding.ServerBinding.Operation;
import dev.sluice.api.config.ConfigException;
import dev.sluice.api.exchange.Next;
import dev.sluice.api.testing.TestBindingContext;
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

class GeminiOptionsTest
{
    private static final String PATH = "bindings.south.options";

    private static GeminiClientOptions client(String json)
    {
        return Options.bind(Fixtures.tree(json), GeminiClientOptions.class, PATH);
    }

    @Test
    void clientOptionsHaveDefaults()
    {
        GeminiClientOptions o = client("{\"url\":\"https://generativelanguage.googleapis.com/v1beta\","
            + "\"api_key\":\"AIza-1\"}");
        assertThat(o.apiKey()).isEqualTo("AIza-1");
        assertThat(o.forwardHeaders()).isEmpty();
        assertThat(o.dropUnsupported()).isEmpty();
        assertThat(o.http()).isNull();
    }

    @Test
    void clientOptionsNeverShowTheApiKey()
    {
        assertThat(client("{\"url\":\"https://x/v1beta\",\"api_key\":\"AIza-secret-123\"}").toString())
            .doesNotContain("AIza-secret-123").contains("apiKey=***");
    }

    @Test
    void apiKeysBindAsAPoolAndNeverShow()
    {
        GeminiClientOptions o = client("{\"url\":\"http://x/v1\",\"api_keys\":[\"AIza-secret-1\",\"AIza-secret-2\"]}");
        assertThat(o.apiKeys()).containsExactly("AIza-secret-1", "AIza-secret-2");
        assertThat(o.apiKey()).isNull();
        assertThat(o.toString()).doesNotContain("AIza-secret").contains("apiKey=none, apiKeys=2 keys");
        assertThat(client("{\"url\":\"http://x/v1\",\"api_key\":\"AIza-1\"}").apiKeys()).isEmpty();
    }

    @Test
    void apiKeysAreRefusedWithApiKeyEmptyBlankOrRepeatedNamingThePath()
    {
        ConfigException both = catchThrowableOfType(ConfigException.class,
            () -> client("{\"url\":\"http://x/v1\",\"api_key\":\"AIza-1\",\"api_keys\":[\"AIza-2\"]}"));
        assertThat(both.getMessage()).isEqualTo(PATH + ".api_keys: must not be given with api_key (expected: one key in"
            + " api_key, or several in api_keys)");
        ConfigException empty = catchThrowableOfType(ConfigException.class,
            () -> client("{\"url\":\"http://x/v1\",\"api_keys\":[]}"));
        assertThat(empty.getMessage()).isEqualTo(PATH + ".api_keys: must not be empty (expected: at least one key)");
        ConfigException blank = catchThrowableOfType(ConfigException.class,
            () -> client("{\"url\":\"http://x/v1\",\"api_keys\":[\"AIza-1\",\" \"]}"));
        assertThat(blank.getMessage()).isEqualTo(PATH + ".api_keys[1]: must not be blank");
        ConfigException twice = catchThrowableOfType(ConfigException.class,
            () -> client("{\"url\":\"http://x/v1\",\"api_keys\":[\"AIza-secret-1\",\"AIza-secret-1\"]}"));
        assertThat(twice.getMessage()).isEqualTo(PATH + ".api_keys[1]: the same key as api_keys[0] (expected: each key once)");
    }

    @Test
    void rejectsUnknownKeysNamingThePath()
    {
        ConfigException e = catchThrowableOfType(ConfigException.class,
            () -> client("{\"url\":\"http://x\",\"apikey\":\"k\"}"));
        assertThat(e.path()).isEqualTo(PATH + ".apikey");
        assertThat(e.getMessage()).contains("unknown key");

        ConfigException nested = catchThrowableOfType(ConfigException.class,
            () -> client("{\"url\":\"http://x\",\"http\":{\"versoin\":\"h2c\"}}"));
        assertThat(nested.path()).isEqualTo(PATH + ".http.versoin");
    }

    @Test
    void rejectsWrongTypesNamingThePath()
    {
        ConfigException e = catchThrowableOfType(ConfigException.class,
            () -> client("{\"url\":\"http://x\",\"drop_unsupported\":\"store\"}"));
        assertThat(e.path()).isEqualTo(PATH + ".drop_unsupported");
    }

    @Test
    void refusesToForwardCredentials()
    {
        ConfigException e = catchThrowableOfType(ConfigException.class,
            () -> client("{\"url\":\"http://x\",\"forward_headers\":[\"x-request-id\",\"X-Goog-Api-Key\"]}"));
        assertThat(e.getMessage())
            .startsWith(PATH + ".forward_headers[1]: value: \"X-Goog-Api-Key\" (expected: a header the gateway");
    }

    @Test
    void clientFactoryAsksForOneUpstreamWithTheHttpSettings()
    {
        RecordingContext context = new RecordingContext();
        new GeminiClientFactory().create(config(BindingKind.CLIENT,
            "{\"url\":\"https://generativelanguage.googleapis.com/v1beta/\",\"api_key\":\"k\","
                + "\"http\":{\"version\":\"http/1.1\",\"first_byte_timeout\":\"30s\"}}"), context);

        assertThat(new GeminiClientFactory().type()).isEqualTo("gemini");
        assertThat(context.requested).hasSize(1);
        UpstreamOptions o = context.requested.get(0);
        assertThat(o.baseUrl()).isEqualTo(URI.create("https://generativelanguage.googleapis.com/v1beta"));
        assertThat(o.version()).isEqualTo(HttpVersion.HTTP_1_1);
        assertThat(o.firstByteTimeout()).isEqualTo(Duration.ofSeconds(30));
    }

    @Test
    void clientFactoryRejectsAMissingOrBadUrl()
    {
        ConfigException missing = catchThrowableOfType(ConfigException.class,
            () -> new GeminiClientFactory().create(config(BindingKind.CLIENT, "{\"api_key\":\"k\"}"),
                new RecordingContext()));
        assertThat(missing.path()).isEqualTo(PATH + ".url");
        ConfigException bad = catchThrowableOfType(ConfigException.class,
            () -> new GeminiClientFactory().create(config(BindingKind.CLIENT, "{\"url\":\"ftp://x\"}"),
                new RecordingContext()));
        assertThat(bad.path()).isEqualTo(PATH + ".url");
    }

    @Test
    void serverFactoryServesThePrefix()
    {
        GeminiServerFactory factory = new GeminiServerFactory();
        assertThat(factory.type()).isEqualTo("gemini");

        ServerBinding binding = factory.create(config(BindingKind.SERVER, "{}"), new TestBindingContext());
        assertThat(binding.endpoints()).contains(new Endpoint("POST", "/v1beta/models/*"),
            new Endpoint("POST", "/v1beta/models/*:embedContent", Operation.EMBEDDINGS, ModelIn.PATH),
            new Endpoint("POST", "/v1beta/models/*:batchEmbedContents", Operation.EMBEDDINGS, ModelIn.PATH));
        assertThat(binding.codec()).isSameAs(GeminiCodec.INSTANCE);
        assertThat(new Endpoint("POST", "/v1beta/models/*").matches("POST", "/v1beta/models/gemini-2.5-flash:generateContent"))
            .isTrue();

        ServerBinding custom = factory.create(config(BindingKind.SERVER,
            "{\"path_prefix\":\"/gemini/v1beta/models/\"}"), new TestBindingContext());
        assertThat(custom.endpoints()).contains(new Endpoint("POST", "/gemini/v1beta/models/*"),
            new Endpoint("POST", "/gemini/v1beta/models/*:batchEmbedContents", Operation.EMBEDDINGS, ModelIn.PATH));
        assertThat(custom.peek("/gemini/v1beta/models/m:generateContent", null, Fixtures.utf8("{\"contents\":[{}]}")).model())
            .isEqualTo("m");
    }

    @Test
    void serverFactoryRejectsABadPrefixAndUnknownKeys()
    {
        ConfigException noSlash = catchThrowableOfType(ConfigException.class, () -> new GeminiServerFactory()
            .create(config(BindingKind.SERVER, "{\"path_prefix\":\"/v1beta/models\"}"), new TestBindingContext()));
        assertThat(noSlash.getMessage()).isEqualTo(PATH + ".path_prefix: value: \"/v1beta/models\" (expected: a path"
            + " starting and ending with /, such as /v1beta/models/)");
        ConfigException unknown = catchThrowableOfType(ConfigException.class, () -> new GeminiServerFactory()
            .create(config(BindingKind.SERVER, "{\"path\":\"/v1\"}"), new TestBindingContext()));
        assertThat(unknown.path()).isEqualTo(PATH + ".path");
    }

    private static BindingConfig config(BindingKind kind, String options)
    {
        return new BindingConfig("south", "gemini", kind, Fixtures.tree(options), null, List.of());
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
