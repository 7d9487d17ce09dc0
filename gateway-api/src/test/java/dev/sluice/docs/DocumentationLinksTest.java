package dev.sluice.docs;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Collectors;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The README, {@code docs/} and every other Markdown file of the repository as a reader meets them on GitHub: every
 * relative link and {@code #anchor} resolves, and every comment in the code or config that cites a document section
 * names one that exists ({@link DocLinks} has the rules). It runs in gateway-api, the first module of the build, and
 * reads the repository from the module's parent.
 */
class DocumentationLinksTest
{
    private static final Path ROOT = repositoryRoot();

    @Test
    void everyRelativeLinkAndAnchorInTheReadmeDocsAndOtherMarkdownResolves()
    {
        List<Path> markdown = DocLinks.walk(ROOT, ".md").collect(Collectors.toList());
        assertThat(markdown).contains(ROOT.resolve("README.md"), ROOT.resolve("docs/configuration.md"),
            ROOT.resolve("docs/plugins/mock.md"));
        assertThat(new DocLinks(ROOT).checkLinks(markdown)).isEmpty();
    }

    @Test
    void everyDocSectionTheCodeAndConfigCiteExists()
    {
        List<Path> sources = DocLinks.walk(ROOT, ".java", ".yaml", ".yml", ".xml").collect(Collectors.toList());
        assertThat(sources).anyMatch(p -> p.endsWith(Path.of("gateway-runtime", "pom.xml")));
        assertThat(new DocLinks(ROOT).checkCitations(sources)).isEmpty();
    }

    @Test
    void aLinkToAMissingFileOrHeadingIsReported(@TempDir Path dir) throws IOException
    {
        write(dir.resolve("docs/a.md"), "# Page A\n\n## Timeouts: `idle` (HTTP/1.1)\n\n## Notes\n\n## Notes\n\nText.\n");
        write(dir.resolve("README.md"), String.join("\n",
            "# Title",
            "",
            "[ok](docs/a.md#timeouts-idle-http11) [dup](docs/a.md#notes-1) [self](#title) [web](https://example.com/x#y)",
            "[folder](docs/) `[in code](docs/none.md)`",
            "",
            "```",
            "[in a fence](docs/none.md)",
            "```",
            "",
            "A [wrapped",
            "link](docs/missing.md) and [a bad anchor](docs/a.md#timeouts) and [another](#nowhere).",
            "",
            "[ref]: docs/gone.md",
            ""));
        List<String> problems = new DocLinks(dir).checkLinks(List.of(dir.resolve("README.md"), dir.resolve("docs/a.md")));
        assertThat(problems).containsExactly(
            "README.md:10: (docs/missing.md) no such file",
            "README.md:11: (docs/a.md#timeouts) no heading with anchor #timeouts",
            "README.md:11: (#nowhere) no heading with anchor #nowhere",
            "README.md:13: (docs/gone.md) no such file");
    }

    @Test
    void aCitationOfAMissingFileOrSectionIsReported(@TempDir Path dir) throws IOException
    {
        write(dir.resolve("docs/ops.md"), "# Ops\n\n## Timeouts\n\n**Shared services.** Text.\n");
        write(dir.resolve("README.md"), "# Sluice\n\n## Try it\n");
        write(dir.resolve("src/A.java"), String.join("\n",
            "/**",
            " * Good: (docs/ops.md, \"Timeouts\"), README \"Try it\", docs/ops.md (\"Shared",
            " * services\"), bench-less README's \"Try it\".",
            " * Bad: (docs/ops.md, \"Execution model\") and docs/gone.md and (README",
            " * \"Fuzz tests\").",
            " */",
            "class A { String s = \"README \\\"Not a comment\\\"\"; // docs/ops.md \"Nope\"",
            "}"));
        write(dir.resolve("conf/x.yaml"), "a: 1   # see README \"Gone\"\nb: \"#\"\n");
        List<String> problems = new DocLinks(dir).checkCitations(List.of(dir.resolve("src/A.java"), dir.resolve("conf/x.yaml")));
        assertThat(problems).containsExactly(
            "src/A.java: docs/ops.md \"Execution model\": no such heading or bold lead in docs/ops.md",
            "src/A.java: docs/gone.md: no such file",
            "src/A.java: README \"Fuzz tests\": no such heading or bold lead in README",
            "src/A.java: docs/ops.md \"Nope\": no such heading or bold lead in docs/ops.md",
            "conf/x.yaml: README \"Gone\": no such heading or bold lead in README");
    }

    @Test
    void anchorsFollowGitHubsRules()
    {
        assertThat(DocLinks.slug("Virtual keys (plugins/keys)")).isEqualTo("virtual-keys-pluginskeys");
        assertThat(DocLinks.slug("JVM flags: the candidates")).isEqualTo("jvm-flags-the-candidates");
        assertThat(DocLinks.slug("Paired plugin costs (`--pair`)")).isEqualTo("paired-plugin-costs---pair");
        assertThat(DocLinks.slug("[Links](x.md) and *emphasis*, 2× faster")).isEqualTo("links-and-emphasis-2-faster");
        assertThat(DocLinks.slug("snake_case stays")).isEqualTo("snake_case-stays");
    }

    private static void write(Path file, String text) throws IOException
    {
        Files.createDirectories(file.getParent());
        Files.writeString(file, text, StandardCharsets.UTF_8);
    }

    /** The folder above this module: surefire runs tests in the module's directory. */
    private static Path repositoryRoot()
    {
        Path dir = Path.of("").toAbsolutePath();
        while (dir != null && !(Files.isRegularFile(dir.resolve("README.md")) && Files.isDirectory(dir.resolve("docs"))))
            dir = dir.getParent();
        if (dir == null)
            throw new IllegalStateException("no README.md with a docs/ folder above " + Path.of("").toAbsolutePath());
        return dir;
    }
}
