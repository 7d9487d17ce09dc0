package dev.sluice.runtime;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.sluice.runtime.internal.config.ConfigLoader;
import dev.sluice.runtime.internal.config.GatewayConfig;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The repository's Dockerfile, read instruction by instruction (no engine runs here): it builds the distribution the
 * runtime stage copies, and runs it as {@code bin/sluice} does elsewhere, as a user that is not root.
 */
class DockerfileTest
{
    /** One instruction: its keyword, upper case, and its arguments with continuation lines joined. */
    record Instruction(int stage, String keyword, String args)
    {
    }

    private static final Pattern HEALTH_TARGET = Pattern.compile("/dev/tcp/127\\.0\\.0\\.1/(\\d+)");

    private static List<Instruction> instructions;
    private static Path root;

    @BeforeAll
    static void read() throws IOException
    {
        root = DeployFiles.repositoryRoot();
        instructions = parse(Files.readAllLines(root.resolve("Dockerfile")));
    }

    /** Joins continuation lines, drops comments and blank lines, numbers the build stages from 0. */
    static List<Instruction> parse(List<String> lines)
    {
        List<Instruction> out = new ArrayList<>();
        StringBuilder current = new StringBuilder();
        int stage = -1;
        for (String line : lines)
        {
            String trimmed = line.strip();
            if (trimmed.startsWith("#") || (trimmed.isEmpty() && current.isEmpty()))
                continue;
            boolean continues = trimmed.endsWith("\\");
            current.append(continues ? trimmed.substring(0, trimmed.length() - 1) : trimmed).append(' ');
            if (continues)
                continue;
            String text = current.toString().strip();
            current.setLength(0);
            int space = text.indexOf(' ');
            String keyword = (space < 0 ? text : text.substring(0, space)).toUpperCase(Locale.ROOT);
            if (keyword.equals("FROM"))
                stage++;
            out.add(new Instruction(stage, keyword, space < 0 ? "" : text.substring(space + 1).strip()));
        }
        return out;
    }

    private static List<Instruction> all(String keyword)
    {
        return instructions.stream().filter(i -> i.keyword().equals(keyword)).toList();
    }

    private static Instruction last(String keyword)
    {
        List<Instruction> found = all(keyword);
        assertThat(found).as("the Dockerfile has %s", keyword).isNotEmpty();
        return found.get(found.size() - 1);
    }

    private static int runtimeStage()
    {
        return last("FROM").stage();
    }

    /** @return the exec form's arguments ({@code ["a", "b"]}) */
    private static List<String> execForm(String args) throws IOException
    {
        assertThat(args).as("exec form (a JSON array), so that the process gets the stop signal itself").startsWith("[");
        return Arrays.asList(new ObjectMapper().readValue(args, String[].class));
    }

    /** @return the numeric UID the runtime stage runs as */
    static int runtimeUid() throws IOException
    {
        if (instructions == null)
            read();
        String user = last("USER").args().split(":")[0];
        assertThat(user).as("USER is numeric, so that Kubernetes' runAsNonRoot can verify it").matches("\\d+");
        return Integer.parseInt(user);
    }

    private static String copiedDistribution()
    {
        return all("COPY").stream()
            .filter(c -> c.stage() == runtimeStage() && c.args().startsWith("--from="))
            .map(Instruction::args)
            .findFirst()
            .orElseThrow(() -> new AssertionError("the runtime stage copies nothing from the build stage"));
    }

    private static GatewayConfig defaultConfig()
    {
        Map<String, String> env = Map.of("OPENAI_BASE_URL", "https://api.openai.com/v1", "OPENAI_API_KEY", "sk-test");
        return new ConfigLoader(env::get).load(root.resolve("config/gateway.yaml"));
    }

    @Test
    void theBuildStageRunsMavenPackageAndTheRuntimeStageCopiesTheDistributionItAssembles() throws IOException
    {
        List<Instruction> froms = all("FROM");
        assertThat(froms).hasSize(2);
        String[] build = froms.get(0).args().split("\\s+");
        assertThat(build[0]).startsWith("maven:").contains("17");
        assertThat(build).containsSubsequence("AS", "build");
        String buildDir = all("WORKDIR").stream().filter(w -> w.stage() == 0).findFirst().orElseThrow().args();
        assertThat(all("COPY").stream().filter(c -> c.stage() == 0).map(Instruction::args)).contains(". .");
        assertThat(all("RUN").stream().filter(r -> r.stage() == 0).map(Instruction::args))
            .anySatisfy(r -> assertThat(r).contains("mvn -B -ntp package -DskipTests"));

        // What the build stage's Maven makes in gateway-runtime: the sluice.dist folder the other tests run.
        String[] copy = copiedDistribution().split("\\s+");
        assertThat(copy[0]).isEqualTo("--from=build");
        String relative = root.relativize(TestDist.home().toAbsolutePath().normalize()).toString();
        assertThat(copy[1]).isEqualTo(buildDir + "/" + relative);
        assertThat(Files.isExecutable(TestDist.home().resolve("bin/sluice"))).isTrue();
        assertThat(Files.readString(root.resolve("pom.xml"))).contains("<module>gateway-runtime</module>");
    }

    @Test
    void theRuntimeIsAJre17ImageRunAsAUserThatIsNotRoot() throws IOException
    {
        assertThat(last("FROM").args()).matches("eclipse-temurin:17[^\\s]*-jre[^\\s]*");
        assertThat(last("USER").stage()).isEqualTo(runtimeStage());
        int uid = runtimeUid();
        assertThat(uid).isPositive();
        assertThat(all("RUN").stream().filter(r -> r.stage() == runtimeStage()).map(Instruction::args))
            .anySatisfy(r -> assertThat(r).contains("useradd").contains("--uid " + uid));
    }

    @Test
    void itExposesTheDefaultConfigsPortsAndChecksHealthOnTheApiPort()
    {
        GatewayConfig config = defaultConfig();
        List<Integer> exposed = all("EXPOSE").stream()
            .flatMap(e -> Arrays.stream(e.args().split("\\s+")))
            .map(p -> Integer.parseInt(p.replace("/tcp", "")))
            .toList();
        assertThat(exposed).contains(config.port(), config.admin().port());
        String health = last("HEALTHCHECK").args();
        assertThat(health).contains("CMD").contains("/healthz").contains(" 200 ");
        Matcher target = HEALTH_TARGET.matcher(health);
        assertThat(target.find()).as("the health check connects to the loopback: %s", health).isTrue();
        assertThat(Integer.parseInt(target.group(1))).isEqualTo(config.port()).isIn(exposed);
    }

    @Test
    void theEntrypointIsBinSluiceWithTheDefaultConfigSoTheJvmFlagsAreTheLaunchers() throws IOException
    {
        String home = copiedDistribution().split("\\s+")[2];
        List<String> entrypoint = execForm(last("ENTRYPOINT").args());
        assertThat(entrypoint).containsExactly(home + "/bin/sluice");
        List<String> cmd = execForm(last("CMD").args());
        assertThat(cmd).startsWith("run", "--config");
        String config = cmd.get(2);
        assertThat(config).startsWith(home + "/");
        assertThat(root.resolve(config.substring(home.length() + 1))).as("the default config is one of config/").isRegularFile();
        assertThat(all("ENV").stream().map(Instruction::args))
            .as("bin/sluice's DEFAULT_OPTS are the image's JVM flags").noneMatch(e -> e.contains("SLUICE_JAVA_OPTS"));
        assertThat(last("STOPSIGNAL").args()).isEqualTo("SIGTERM");
    }

    @Test
    void theBuildContextKeepsEveryModuleAndDropsBuildOutput() throws IOException
    {
        List<String> ignored = Files.readAllLines(root.resolve(".dockerignore")).stream()
            .map(String::strip)
            .filter(l -> !l.isEmpty() && !l.startsWith("#"))
            .toList();
        assertThat(ignored).contains("**/target", ".git");
        assertThat(ignored).noneMatch(l -> List.of("gateway-api", "gateway-support", "gateway-runtime", "plugins", "config",
            "mock-provider", "plugin-examples", "bench", "pom.xml").contains(l.replaceAll("^/|/$", "")));
    }
}
