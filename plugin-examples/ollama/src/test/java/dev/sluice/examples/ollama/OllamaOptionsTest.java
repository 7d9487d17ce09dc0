package dev.sluice.examples.ollama;

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
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvFileSource;

import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

class OllamaOptionsTest
{
    private static final String PATH = "bindings.south.options";

    private static OllamaClientOptions client(String json)
    {
        return Options.bind(Fixtures.tree(json), OllamaClientOptions.class, PATH);
    }

    @Test
    void clientOptionsHaveDefaults()
    {
        OllamaClientOptions o = client("{\"url\":\"http://127.0.0.1:11434\"}");
        assertThat(o.path()).isEqualTo("/api/chat");
        assertThat(o.apiKey()).isNull();
        assertThat(o.forwardHeaders()).isEmpty();
        assertThat(o.dropUnsupported()).isEmpty();
        assertThat(o.http()).isNull();
    }

    @Test
    void clientOptionsNeverShowTheApiKey()
    {
        assertThat(client("{\"url\":\"https://ollama.com\",\"api_key\":\"ok-secret-123\"}").toString())
            .doesNotContain("ok-secret-123").contains("apiKey=***");
    }

    @ParameterizedTest
    @CsvFileSource(resources = "/fixtures/bad-client-options.psv", delimiter = '|', quoteCharacter = '`')
    void rejectsMistakesNamingThePath(String json, String message)
    {
        ConfigException e = catchThrowableOfType(ConfigException.class, () -> client(json));
        assertThat(e).as(json).isNotNull();
        assertThat(e.getMessage()).isEqualTo(message);
    }

    @Test
    void serverFactoryServesTheConfiguredPath()
    {
        OllamaServerFactory factory = new OllamaServerFactory();
        assertThat(factory.type()).isEqualTo("ollama");

        ServerBinding binding = factory.create(config(BindingKind.SERVER, "{}"), new TestBindingContext());
        assertThat(binding.endpoints()).containsExactly(new Endpoint("POST", "/api/chat"),
            new Endpoint("POST", "/api/embed", Operation.EMBEDDINGS, ModelIn.BODY),
            new Endpoint("GET", "/api/tags", Operation.LIST_MODELS, ModelIn.NONE));
        assertThat(binding.codec()).isSameAs(OllamaCodec.INSTANCE);

        ServerBinding custom = factory.create(config(BindingKind.SERVER, "{\"path\":\"/ollama/api/chat\"}"),
            new TestBindingContext());
        assertThat(custom.endpoints()).containsExactly(new Endpoint("POST", "/ollama/api/chat"),
            new Endpoint("POST", "/ollama/api/embed", Operation.EMBEDDINGS, ModelIn.BODY),
            new Endpoint("GET", "/ollama/api/tags", Operation.LIST_MODELS, ModelIn.NONE));
        byte[] noStreamFlag = Fixtures.utf8("{\"model\":\"llama3.2\",\"messages\":[]}");
        assertThat(custom.peek("/ollama/api/chat", null, noStreamFlag).stream())
            .as("the server binding's peek knows Ollama streams by default").isTrue();
    }

    @Test
    void serverFactoryRejectsUnknownKeysAndRelativePaths()
    {
        ConfigException unknown = catchThrowableOfType(ConfigException.class,
            () -> new OllamaServerFactory().create(config(BindingKind.SERVER, "{\"paht\":\"/x\"}"), new TestBindingContext()));
        assertThat(unknown.getMessage()).isEqualTo("bindings.south.options.paht: unknown key (expected one of: limits, path)");

        ConfigException limit = catchThrowableOfType(ConfigException.class,
            () -> new OllamaServerFactory().create(config(BindingKind.SERVER, "{\"limits\":{\"max_messages\":-1}}"),
                new TestBindingContext()));
        assertThat(limit.getMessage())
            .isEqualTo("bindings.south.options.limits.max_messages: value: -1 (expected: a positive integer)");

        ConfigException relative = catchThrowableOfType(ConfigException.class,
            () -> new OllamaServerFactory().create(config(BindingKind.SERVER, "{\"path\":\"x\"}"), new TestBindingContext()));
        assertThat(relative.getMessage())
            .isEqualTo("bindings.south.options.path: value: \"x\" (expected: a path starting with /)");
    }

    @Test
    void clientFactoryAsksForOneUpstreamWithTheHttpSettings()
    {
        RecordingContext context = new RecordingContext();
        OllamaClientFactory factory = new OllamaClientFactory();
        assertThat(factory.type()).isEqualTo("ollama");

        factory.create(config(BindingKind.CLIENT,
            "{\"url\":\"http://127.0.0.1:11434/\",\"http\":{\"version\":\"h2c\",\"first_byte_timeout\":\"120s\"}}"), context);

        assertThat(context.requested).hasSize(1);
        UpstreamOptions o = context.requested.get(0);
        assertThat(o.baseUrl()).isEqualTo(URI.create("http://127.0.0.1:11434"));
        assertThat(o.version()).isEqualTo(HttpVersion.H2C);
        assertThat(o.firstByteTimeout()).isEqualTo(Duration.ofSeconds(120));
    }

    @Test
    void clientFactoryRejectsAMissingOrBadUrl()
    {
        ConfigException missing = catchThrowableOfType(ConfigException.class,
            () -> new OllamaClientFactory().create(config(BindingKind.CLIENT, "{}"), new RecordingContext()));
        assertThat(missing.getMessage())
            .isEqualTo("bindings.south.options.url: must be set (expected: an http or https base URL)");

        ConfigException bad = catchThrowableOfType(ConfigException.class,
            () -> new OllamaClientFactory().create(config(BindingKind.CLIENT, "{\"url\":\"localhost:11434\"}"),
                new RecordingContext()));
        assertThat(bad.getMessage())
            .isEqualTo("bindings.south.options.url: value: \"localhost:11434\" (expected: an http or https base URL)");
    }

    private static BindingConfig config(BindingKind kind, String options)
    {
        return new BindingConfig("south", "ollama", kind, Fixtures.tree(options), null, List.of());
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
