package dev.sluice.runtime;

import dev.sluice.api.config.ConfigException;
import dev.sluice.runtime.internal.config.ConfigLoader;
import dev.sluice.runtime.internal.config.GatewayConfig;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Every config mistake is a startup error that names the exact path. */
class ConfigValidationTest
{
    private static final Map<String, String> ENV = Map.of("MOCK_URL", "http://127.0.0.1:1/v1", "KEY", "sk-test");

    private static final String VALID = """
        listen: { port: 0 }
        bindings:
          north: { type: openai, kind: server, exit: router }
          router:
            type: router
            kind: proxy
            routes:
              - when: [ { model: "gpt-*" } ]
                exit: south
          south:
            type: openai
            kind: client
            options: { url: "${{env.MOCK_URL}}", api_key: "${{env.KEY}}" }
        """;

    @TempDir
    Path dir;

    private static GatewayConfig parse(String yaml)
    {
        return new ConfigLoader(ENV::get).parse(yaml, false);
    }

    private static void assertFails(String yaml, String message)
    {
        assertThatThrownBy(() -> parse(yaml)).isInstanceOf(ConfigException.class).hasMessageStartingWith(message);
    }

    private void assertCheckFails(String yaml, String message) throws Exception
    {
        Path file = dir.resolve("gateway.yaml");
        Files.writeString(file, yaml);
        assertThatThrownBy(() -> Sluice.check(Sluice.options(file, TestDist.plugins()).env(ENV::get)))
            .isInstanceOf(ConfigException.class).hasMessageStartingWith(message);
    }

    @Test
    void acceptsValidConfigAndSubstitutesEnvironment()
    {
        GatewayConfig config = parse(VALID);
        assertThat(config.bindings()).containsOnlyKeys("north", "router", "south");
        assertThat(config.bindings().get("south").options().get("url").asText()).isEqualTo("http://127.0.0.1:1/v1");
        assertThat(config.maxBodyBytes()).isEqualTo(ConfigLoader.DEFAULT_MAX_BODY_BYTES);
    }

    @Test
    void admissionIsOnAndAdaptiveByDefaultAndItsKeysAreChecked()
    {
        GatewayConfig.Admission defaults = parse(VALID).admission();
        assertThat(defaults).isEqualTo(GatewayConfig.Admission.DEFAULTS);
        assertThat(defaults.enabled()).isTrue();
        assertThat(defaults.adaptive()).isTrue();
        assertThat(defaults.initialLimit()).isEqualTo(defaults.maxLimit());
        String with = "listen: { port: 0 }\nadmission: ";
        GatewayConfig.Admission set = parse(VALID.replace("listen: { port: 0 }", with
            + "{ min_limit: 4, max_limit: 400, initial_limit: 40, target_delay: 50ms, retry_after: 2s }")).admission();
        assertThat(set).isEqualTo(new GatewayConfig.Admission(true, true, 4, 400, 40, java.time.Duration.ofMillis(50), 2));
        // Only a ceiling: the limit starts there.
        assertThat(parse(VALID.replace("listen: { port: 0 }", with + "{ max_limit: 8 }")).admission())
            .extracting(GatewayConfig.Admission::minLimit, GatewayConfig.Admission::initialLimit).containsExactly(8, 8);
        GatewayConfig.Admission fixed = parse(VALID.replace("listen: { port: 0 }", with
            + "{ adaptive: false, initial_limit: 7 }")).admission();
        assertThat(fixed).extracting(GatewayConfig.Admission::adaptive, GatewayConfig.Admission::minLimit,
            GatewayConfig.Admission::maxLimit, GatewayConfig.Admission::initialLimit).containsExactly(false, 7, 7, 7);
        assertThat(parse(VALID.replace("listen: { port: 0 }", with + "{ enabled: false }")).admission().enabled()).isFalse();

        assertFails(VALID.replace("listen: { port: 0 }", with + "{ min_limit: 0 }"),
            "admission.min_limit: value: 0 (expected: >= 1)");
        assertFails(VALID.replace("listen: { port: 0 }", with + "{ min_limit: 10, max_limit: 5 }"),
            "admission.min_limit: value: 10 (expected: at most max_limit, 5)");
        assertFails(VALID.replace("listen: { port: 0 }", with + "{ min_limit: 10, initial_limit: 5 }"),
            "admission.initial_limit: value: 5 (expected: between min_limit, 10, and max_limit, 100000)");
        assertFails(VALID.replace("listen: { port: 0 }", with + "{ target_delay: 0ms }"),
            "admission.target_delay: value: PT0S (expected: 1ms..10s)");
        assertFails(VALID.replace("listen: { port: 0 }", with + "{ retry_after: 1500ms }"),
            "admission.retry_after: value: PT1.5S (expected: whole seconds, 1s..1h)");
        assertFails(VALID.replace("listen: { port: 0 }", with + "{ adaptive: false, max_limit: 5 }"),
            "admission.max_limit: applies to an adaptive limit only");
        assertFails(VALID.replace("listen: { port: 0 }", with + "{ limit: 5 }"), "admission.limit: unknown key");
        assertFails(VALID.replace("listen: { port: 0 }", with + "{ adaptive: sometimes }"), "admission.adaptive");
    }

    @Test
    void theConnectionCapDefaultsToTenThousandAndCanBeSetOrTurnedOff()
    {
        assertThat(parse(VALID).maxConnections()).isEqualTo(GatewayConfig.defaultMaxConnections())
            .isBetween(1, GatewayConfig.DEFAULT_MAX_CONNECTIONS);
        assertThat(parse(VALID.replace("listen: { port: 0 }", "listen: { port: 0, max_connections: 2048 }")).maxConnections())
            .isEqualTo(2048);
        assertThat(parse(VALID.replace("listen: { port: 0 }", "listen: { port: 0, max_connections: 0 }")).maxConnections())
            .isZero();
        assertFails(VALID.replace("listen: { port: 0 }", "listen: { port: 0, max_connections: -1 }"),
            "listen.max_connections: value: -1 (expected: >= 1, 0 for no limit)");
    }

    @Test
    void rejectsUnknownTopLevelKey()
    {
        assertFails("listn: { port: 1 }\n" + VALID.substring(VALID.indexOf("bindings:")),
            "listn: unknown key (expected one of: admin, admission, bindings, execution, limits, listen, shutdown, warmup)");
    }

    @Test
    void rejectsAnEmptyThreadPool()
    {
        assertFails("execution: { workers: 0 }\n" + VALID, "execution.workers: value: 0 (expected: 1..1024)");
    }

    @Test
    void rejectsUnknownRouteKeyWithItsIndex() throws Exception
    {
        // A route's keys besides when, exit, with and targets are the routing binding's to check (a router's retry…).
        assertCheckFails(VALID.replace("      - when: [ { model: \"gpt-*\" } ]\n        exit: south\n",
                "      - when: [ { model: \"gpt-*\" } ]\n        exit: south\n      - whenn: []\n        exit: south\n"),
            "bindings.router.routes[1].whenn: unknown key");
    }

    @Test
    void rejectsWrongTypeNamingThePath()
    {
        assertFails(VALID.replace("listen: { port: 0 }", "listen: { port: \"eighty\" }"), "listen.port: ");
        assertFails(VALID.replace("listen: { port: 0 }", "listen: { port: 70000 }"), "listen.port: value: 70000 (expected: 0..65535)");
        assertFails(VALID.replace("listen: { port: 0 }", "shutdown: { grace: soon }"), "shutdown.grace: value: \"soon\"");
    }

    @Test
    void rejectsUnknownAdminKey()
    {
        assertFails("admin: { stagez: true }\n" + VALID, "admin.stagez: unknown key (expected one of: host, port, stages, token)");
    }

    @Test
    void rejectsUnknownKind()
    {
        assertFails(VALID.replace("kind: server", "kind: servr"), "bindings.north.kind: value: \"servr\" (expected: server, proxy or client)");
    }

    @Test
    void rejectsDanglingExit()
    {
        assertFails(VALID.replace("exit: router }", "exit: routr }"), "bindings.north.exit: value: \"routr\" names no binding (expected one of: north, router, south)");
    }

    @Test
    void rejectsDanglingRouteExit()
    {
        assertFails(VALID.replace("        exit: south", "        exit: sout"), "bindings.router.routes[0].exit: value: \"sout\" names no binding");
    }

    @Test
    void rejectsCycles()
    {
        String yaml = """
            bindings:
              north: { type: openai, kind: server, exit: a }
              a: { type: deny-words, kind: proxy, exit: b }
              b: { type: deny-words, kind: proxy, exit: a }
            """;
        assertFails(yaml, "bindings.b.exit: creates a cycle: a -> b -> a");
    }

    @Test
    void rejectsChainsThatNeverReachAClient()
    {
        assertFails("""
            bindings:
              north: { type: openai, kind: server, exit: other }
              other: { type: openai, kind: server, exit: north }
            """, "bindings.north.exit: value: \"other\" is a server binding");
        assertFails("""
            bindings:
              north: { type: openai, kind: server, exit: guard }
              guard: { type: deny-words, kind: proxy }
            """, "bindings.guard.exit: must be set: a proxy binding needs an exit or routes");
        assertFails("""
            bindings:
              north: { type: openai, kind: server }
            """, "bindings.north.exit: must be set");
        assertFails("""
            bindings:
              south: { type: openai, kind: client, exit: south2 }
              south2: { type: openai, kind: client }
            """, "bindings.south.exit: client bindings end a chain and take no exit");
    }

    @Test
    void rejectsMissingEnvironmentVariable()
    {
        assertFails(VALID.replace("${{env.KEY}}", "${{env.NOT_SET_ANYWHERE}}"),
            "bindings.south.options.api_key: environment variable NOT_SET_ANYWHERE is not set");
    }

    @Test
    void rejectsSecretsWrittenIntoTheFile()
    {
        assertFails(VALID.replace("\"${{env.KEY}}\"", "\"sk-live-123\""),
            "bindings.south.options.api_key: secrets come only from the environment");
    }

    @Test
    void apiKeysComeOnlyFromTheEnvironmentAndAreSecrets()
    {
        String pool = VALID.replace("api_key: \"${{env.KEY}}\"", "api_keys: [ \"${{env.KEY}}\", \"${{ env.KEY_2 }}\" ]");
        GatewayConfig config = new ConfigLoader(Map.of("MOCK_URL", "http://127.0.0.1:1/v1", "KEY", "sk-test",
            "KEY_2", "sk-test-2")::get).parse(pool, false);

        assertThat(config.bindings().get("south").options().get("api_keys").toString())
            .isEqualTo("[\"sk-test\",\"sk-test-2\"]");
        assertThat(config.secrets()).contains("sk-test", "sk-test-2");
        assertFails(VALID.replace("api_key: \"${{env.KEY}}\"", "api_keys: [ \"${{env.KEY}}\", \"sk-live-123\" ]"),
            "bindings.south.options.api_keys[1]: secrets come only from the environment");
    }

    @Test
    void reportsYamlSyntaxErrorsWithLine()
    {
        assertThatThrownBy(() -> parse("bindings:\n  north: { type: openai\n"))
            .isInstanceOf(ConfigException.class).hasMessageContaining("not valid YAML at line");
    }

    @Test
    void readsJsonConfigs()
    {
        GatewayConfig config = new ConfigLoader(ENV::get).parse("""
            {"bindings": {"north": {"type": "openai", "kind": "server", "exit": "south"},
                          "south": {"type": "mock", "kind": "client"}}}
            """, true);
        assertThat(config.bindings()).containsOnlyKeys("north", "south");
        assertThatThrownBy(() -> new ConfigLoader(ENV::get).parse("{\"bindings\": {\"north\": }", true))
            .isInstanceOf(ConfigException.class).hasMessageContaining("not valid JSON at line 1");
    }

    @Test
    void rejectsUnknownBindingTypeListingTheAvailableOnes() throws Exception
    {
        assertCheckFails(VALID.replace("type: openai, kind: server", "type: opneai, kind: server"),
            "bindings.north.type: value: \"opneai\" is not a server binding type (expected one of: anthropic, gemini, openai, openai-responses)");
    }

    @Test
    void aCacheOrLimitsBindingWithRoutesIsRefusedRatherThanIgnoringThem() throws Exception
    {
        String cache = VALID.replace("north: { type: openai, kind: server, exit: router }",
            "north: { type: openai, kind: server, exit: cache }\n"
            + "  cache: { type: cache, kind: proxy, exit: router, routes: [ { when: [ { model: \"gpt-*\" } ], exit: south } ] }");
        assertCheckFails(cache, "bindings.cache.routes: value: 1 routes (expected: none; the cache sends every miss to its exit;");
        String limits = cache.replace("cache: { type: cache", "cache: { type: limits");
        assertCheckFails(limits, "bindings.cache.routes: value: 1 routes (expected: none; limits passes every admitted request");
    }

    @Test
    void rejectsUnknownPluginOptionKey() throws Exception
    {
        assertCheckFails(VALID.replace("options: { url:", "options: { urll: x, url:"), "bindings.south.options.urll: unknown key");
    }

    @Test
    void rejectsBadRouteConditionInThePlugin() throws Exception
    {
        assertCheckFails(VALID.replace("{ model: \"gpt-*\" }", "{ modle: \"gpt-*\" }"), "bindings.router.routes[0].when[0].modle: unknown key");
    }

    @Test
    void rejectsBadUpstreamUrl() throws Exception
    {
        Map<String, String> env = Map.of("MOCK_URL", "ftp://nowhere", "KEY", "k");
        Path file = dir.resolve("gateway.yaml");
        Files.writeString(file, VALID);
        assertThatThrownBy(() -> Sluice.check(Sluice.options(file, TestDist.plugins()).env(env::get)))
            .isInstanceOf(ConfigException.class).hasMessageStartingWith("bindings.south.options.url: value: \"ftp://nowhere\"");
    }

    @Test
    void checkCommandExplainsTheMistakeAndExitsWithTwo() throws Exception
    {
        Path file = dir.resolve("broken.yaml");
        Files.writeString(file, VALID.replace("exit: router }", "exit: routr }")
            .replace("options: { url: \"${{env.MOCK_URL}}\", api_key: \"${{env.KEY}}\" }", "options: { url: \"http://127.0.0.1:1/v1\" }"));
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        PrintStream original = System.err;
        System.setErr(new PrintStream(err, true, StandardCharsets.UTF_8));
        int code;
        try
        {
            code = Main.run(new String[]{"check", "--config", file.toString(), "--plugins", TestDist.plugins().toString()});
        }
        finally
        {
            System.setErr(original);
        }
        assertThat(code).isEqualTo(2);
        assertThat(err.toString(StandardCharsets.UTF_8)).contains("config error: bindings.north.exit: value: \"routr\" names no binding");
    }

    @Test
    void everyShippedConfigIsValid() throws Exception
    {
        Map<String, String> env = Map.of("OPENAI_BASE_URL", "https://api.openai.com/v1", "OPENAI_API_KEY", "sk-test",
            "ANTHROPIC_API_KEY", "sk-ant-test", "GEMINI_API_KEY", "gm-test");
        try (var files = Files.list(TestDist.configDir()))
        {
            for (Path file : files.filter(f -> f.toString().endsWith(".yaml") || f.toString().endsWith(".json")).toList())
                assertThat(Sluice.check(Sluice.options(file, TestDist.plugins()).env(env::get))).as(file.toString()).isNotEmpty();
        }
    }
}
