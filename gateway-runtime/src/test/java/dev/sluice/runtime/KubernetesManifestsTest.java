package dev.sluice.runtime;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.MappingIterator;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import dev.sluice.api.config.ConfigException;
import dev.sluice.runtime.internal.config.ConfigLoader;
import dev.sluice.runtime.internal.config.GatewayConfig;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/** The manifests of deploy/kubernetes hold together: with each other, with the image, and with the gateway's config. */
class KubernetesManifestsTest
{
    private static final ObjectMapper YAML = new YAMLMapper();

    private static Path folder;
    private static List<JsonNode> manifests;
    private static JsonNode gateway;
    private static JsonNode container;

    @TempDir
    Path dir;

    @BeforeAll
    static void load() throws IOException
    {
        folder = DeployFiles.repositoryRoot().resolve("deploy/kubernetes");
        manifests = new ArrayList<>();
        for (Path file : manifestFiles())
        {
            try (MappingIterator<JsonNode> documents = YAML.readerFor(JsonNode.class).readValues(file.toFile()))
            {
                while (documents.hasNext())
                {
                    JsonNode document = documents.next();
                    if (document != null && !document.isNull() && !document.isEmpty())
                        manifests.add(document);
                }
            }
        }
        gateway = named("Deployment", "sluice");
        container = gateway.at("/spec/template/spec/containers/0");
    }

    private static List<Path> manifestFiles() throws IOException
    {
        try (Stream<Path> files = Files.list(folder))
        {
            return files.filter(f -> f.getFileName().toString().endsWith(".yaml"))
                .filter(f -> !f.getFileName().toString().equals("kustomization.yaml"))
                .sorted()
                .toList();
        }
    }

    private static List<JsonNode> ofKind(String kind)
    {
        return manifests.stream().filter(m -> m.path("kind").asText().equals(kind)).toList();
    }

    private static JsonNode named(String kind, String name)
    {
        return ofKind(kind).stream()
            .filter(m -> m.at("/metadata/name").asText().equals(name))
            .findFirst()
            .orElseThrow(() -> new AssertionError("no " + kind + " named " + name + " in " + folder));
    }

    private static List<JsonNode> list(JsonNode array)
    {
        List<JsonNode> out = new ArrayList<>();
        array.forEach(out::add);
        return out;
    }

    private static Map<String, String> map(JsonNode object)
    {
        Map<String, String> out = new HashMap<>();
        for (Iterator<Map.Entry<String, JsonNode>> it = object.fields(); it.hasNext(); )
        {
            Map.Entry<String, JsonNode> e = it.next();
            out.put(e.getKey(), e.getValue().asText());
        }
        return out;
    }

    /** @return the value of a Secret's key, from stringData or base64 data; fails when the Secret or key is missing */
    private static String secretValue(String name, String key)
    {
        JsonNode secret = named("Secret", name);
        if (secret.at("/stringData").has(key))
            return secret.at("/stringData").get(key).asText();
        assertThat(secret.at("/data").has(key)).as("Secret %s has the key %s", name, key).isTrue();
        return new String(Base64.getDecoder().decode(secret.at("/data").get(key).asText()), StandardCharsets.UTF_8);
    }

    /** @return the gateway container's environment, with each secretKeyRef resolved from the Secrets of the folder */
    private static Map<String, String> gatewayEnvironment()
    {
        Map<String, String> env = new HashMap<>();
        for (JsonNode var : container.path("env"))
        {
            JsonNode ref = var.at("/valueFrom/secretKeyRef");
            String value = ref.isMissingNode()
                ? var.path("value").asText()
                : secretValue(ref.path("name").asText(), ref.path("key").asText());
            env.put(var.path("name").asText(), value);
        }
        return env;
    }

    /** @return the config file the container is started with, as the ConfigMap volume mounts it */
    private static String configText()
    {
        List<String> args = list(container.path("args")).stream().map(JsonNode::asText).toList();
        int at = args.indexOf("--config");
        assertThat(at).as("the container's args name a --config: %s", args).isNotNegative();
        Path configPath = Path.of(args.get(at + 1));
        JsonNode mount = list(container.path("volumeMounts")).stream()
            .filter(m -> configPath.startsWith(m.path("mountPath").asText()))
            .findFirst()
            .orElseThrow(() -> new AssertionError("no volume mounted where the config is read: " + configPath));
        JsonNode volume = volume(mount.path("name").asText());
        String configMap = volume.at("/configMap/name").asText();
        assertThat(configMap).as("the config's volume is a ConfigMap").isNotEmpty();
        String key = Path.of(mount.path("mountPath").asText()).relativize(configPath).toString();
        JsonNode data = named("ConfigMap", configMap).path("data");
        assertThat(data.has(key)).as("ConfigMap %s has the key %s", configMap, key).isTrue();
        return data.get(key).asText();
    }

    private static JsonNode volume(String name)
    {
        return list(gateway.at("/spec/template/spec/volumes")).stream()
            .filter(v -> v.path("name").asText().equals(name))
            .findFirst()
            .orElseThrow(() -> new AssertionError("no volume " + name + " in the Deployment"));
    }

    private static GatewayConfig gatewayConfig()
    {
        return new ConfigLoader(gatewayEnvironment()::get).parse(configText(), false);
    }

    /** @return the port a probe or a Service's targetPort means: a number, or the name of one of the container's ports */
    private static int containerPort(JsonNode port)
    {
        return port.isInt() ? port.asInt() : namedPort(port.asText());
    }

    private static int namedPort(String name)
    {
        return list(container.path("ports")).stream()
            .filter(p -> p.path("name").asText().equals(name))
            .map(p -> p.path("containerPort").asInt())
            .findFirst()
            .orElseThrow(() -> new AssertionError("the container has no port named " + name));
    }

    private static boolean selects(JsonNode matchLabels, JsonNode labels)
    {
        return !matchLabels.isEmpty() && map(labels).entrySet().containsAll(map(matchLabels).entrySet());
    }

    @Test
    void everyManifestIsListedInTheKustomization() throws IOException
    {
        JsonNode kustomization = YAML.readTree(folder.resolve("kustomization.yaml").toFile());
        List<String> listed = list(kustomization.path("resources")).stream().map(JsonNode::asText).sorted().toList();
        assertThat(listed).containsExactlyElementsOf(manifestFiles().stream().map(f -> f.getFileName().toString()).toList());
    }

    @Test
    void theFolderHoldsTheGatewayItsConfigSecretsServicesDisruptionBudgetAndRedis()
    {
        assertThat(manifests).allSatisfy(m ->
        {
            assertThat(m.path("apiVersion").asText()).isNotEmpty();
            assertThat(m.at("/metadata/name").asText()).isNotEmpty();
        });
        assertThat(manifests.stream().map(m -> m.path("kind").asText()).distinct())
            .contains("Deployment", "Service", "ConfigMap", "Secret", "PodDisruptionBudget");
        assertThat(gateway.at("/spec/replicas").asInt()).isEqualTo(3);
        assertThat(selects(gateway.at("/spec/selector/matchLabels"), gateway.at("/spec/template/metadata/labels"))).isTrue();
    }

    @Test
    void probesAskReadinessAndLivenessOnTheGatewaysListenPort()
    {
        int listen = gatewayConfig().port();
        assertThat(container.at("/readinessProbe/httpGet/path").asText()).isEqualTo("/readyz");
        assertThat(containerPort(container.at("/readinessProbe/httpGet/port"))).isEqualTo(listen);
        assertThat(container.at("/livenessProbe/httpGet/path").asText()).isEqualTo("/healthz");
        assertThat(containerPort(container.at("/livenessProbe/httpGet/port"))).isEqualTo(listen);
        if (container.has("startupProbe"))
            assertThat(container.at("/startupProbe/httpGet/path").asText()).isIn("/healthz", "/readyz");
    }

    @Test
    void kubernetesWaitsForThePreStopSleepAndTheWholeShutdownGrace()
    {
        List<String> preStop = list(container.at("/lifecycle/preStop/exec/command")).stream().map(JsonNode::asText).toList();
        assertThat(preStop).as("preStop sleeps while the endpoints forget the pod").hasSize(2).first().isEqualTo("sleep");
        long sleep = Long.parseLong(preStop.get(1));
        assertThat(sleep).isPositive();
        long grace = gatewayConfig().grace().toSeconds();
        assertThat(grace).as("the config's shutdown.grace").isPositive();
        assertThat(gateway.at("/spec/template/spec/terminationGracePeriodSeconds").asLong())
            .as("terminationGracePeriodSeconds is above the preStop sleep plus shutdown.grace")
            .isGreaterThan(sleep + grace);
    }

    @Test
    void theConfigMapsConfigLoadsWithTheEnvironmentTheDeploymentGivesIt()
    {
        GatewayConfig config = gatewayConfig();
        assertThat(config.host()).isEqualTo("0.0.0.0");
        assertThat(namedPort("http")).isEqualTo(config.port());
        if (config.admin().enabled())
        {
            assertThat(config.admin().host()).isEqualTo("0.0.0.0");
            assertThat(config.admin().token()).as("an admin listener open to the cluster needs a token").isNotBlank();
            assertThat(list(container.path("ports")).stream().map(p -> p.path("containerPort").asInt()))
                .contains(config.admin().port());
        }
        assertThat(config.bindings().get("limits").options().at("/store/redis/url").asText())
            .as("the limits are shared by the replicas in Redis").isEqualTo(gatewayEnvironment().get("REDIS_URL"));
    }

    @Test
    void theConfigMapsConfigPassesSluiceCheckWithTheDistributionsPlugins() throws IOException
    {
        Path file = Files.writeString(dir.resolve("gateway.yaml"), configText());
        Map<String, String> env = gatewayEnvironment();
        assertThat(Sluice.check(Sluice.options(file, TestDist.plugins()).env(env::get)))
            .contains("keys", "limits", "cache", "north_responses", "router", "south_openai", "south_anthropic");
    }

    @Test
    void everySecretTheGatewayReadsExistsWithItsKeys()
    {
        Map<String, String> env = gatewayEnvironment();
        assertThat(env).containsKeys("REDIS_URL", "OPENAI_API_KEY", "ANTHROPIC_API_KEY");
        assertThat(env.values()).allSatisfy(v -> assertThat(v).isNotBlank());
        assertThat(env).as("the JVM flags are bin/sluice's").doesNotContainKey("SLUICE_JAVA_OPTS");
        for (JsonNode v : gateway.at("/spec/template/spec/volumes"))
        {
            if (v.has("secret"))
                named("Secret", v.at("/secret/secretName").asText());
        }
        // The keys binding's file is a key of a mounted Secret, and that file holds only hashes.
        String keysFile = gatewayConfig().bindings().get("keys").options().path("file").asText();
        JsonNode mount = list(container.path("volumeMounts")).stream()
            .filter(m -> Path.of(keysFile).getParent().toString().equals(m.path("mountPath").asText()))
            .findFirst()
            .orElseThrow(() -> new AssertionError("no volume mounted at the folder of the keys file " + keysFile));
        String secret = volume(mount.path("name").asText()).at("/secret/secretName").asText();
        assertThat(secret).as("the keys file comes from a Secret").isNotEmpty();
        String keys = secretValue(secret, Path.of(keysFile).getFileName().toString());
        assertThat(keys).doesNotContain("sk-sluice-").contains("sha256");
    }

    @Test
    void redisUrlNamesTheRedisServiceAndItsPort()
    {
        URI url = URI.create(gatewayEnvironment().get("REDIS_URL"));
        assertThat(url.getScheme()).isIn("redis", "rediss");
        JsonNode service = named("Service", url.getHost());
        int port = url.getPort() == -1 ? 6379 : url.getPort();
        assertThat(list(service.at("/spec/ports")).stream().map(p -> p.path("port").asInt())).contains(port);
        assertThat(ofKind("Deployment")).as("a Deployment behind the Service %s", url.getHost())
            .anySatisfy(d -> assertThat(selects(service.at("/spec/selector"), d.at("/spec/template/metadata/labels"))).isTrue());
    }

    @Test
    void theServiceAndTheDisruptionBudgetSelectTheGatewayPods()
    {
        JsonNode labels = gateway.at("/spec/template/metadata/labels");
        JsonNode service = named("Service", gateway.at("/metadata/name").asText());
        assertThat(selects(service.at("/spec/selector"), labels)).isTrue();
        for (JsonNode port : service.at("/spec/ports"))
            containerPort(port.path("targetPort"));
        JsonNode pdb = ofKind("PodDisruptionBudget").stream()
            .filter(p -> selects(p.at("/spec/selector/matchLabels"), labels))
            .findFirst()
            .orElseThrow(() -> new AssertionError("no PodDisruptionBudget selects the gateway's pods " + labels));
        assertThat(pdb.at("/spec/minAvailable").asInt()).isBetween(1, gateway.at("/spec/replicas").asInt() - 1);
    }

    @Test
    void resourcesFitTheLaunchersHeapAndEveryPodRunsAsNonRoot() throws IOException
    {
        JsonNode resources = container.path("resources");
        assertThat(resources.at("/requests/cpu").asText()).isNotEmpty();
        long request = DeployFiles.quantityBytes(resources.at("/requests/memory").asText());
        long limit = DeployFiles.quantityBytes(resources.at("/limits/memory").asText());
        long maxHeap = DeployFiles.launcherMaxHeapBytes();
        assertThat(request).as("the request covers the measured RSS under load (~250 MiB)").isGreaterThanOrEqualTo(256L << 20);
        assertThat(limit).as("the limit leaves room outside bin/sluice's -Xmx").isGreaterThanOrEqualTo(maxHeap + (256L << 20));
        assertThat(limit).isGreaterThanOrEqualTo(request);
        int imageUser = DockerfileTest.runtimeUid();
        assertThat(gateway.at("/spec/template/spec/securityContext/runAsUser").asInt()).isEqualTo(imageUser);
        for (JsonNode deployment : ofKind("Deployment"))
        {
            JsonNode pod = deployment.at("/spec/template/spec");
            assertThat(pod.at("/securityContext/runAsNonRoot").asBoolean()).isTrue();
            assertThat(pod.at("/securityContext/runAsUser").asInt()).isPositive();
            for (JsonNode c : pod.path("containers"))
            {
                assertThat(c.at("/securityContext/allowPrivilegeEscalation").asBoolean(true)).isFalse();
                assertThat(c.at("/resources/limits/memory").asText()).isNotEmpty();
            }
        }
    }
}
