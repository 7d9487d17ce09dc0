package dev.sluice.docs;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * Checks the repository's Markdown the way GitHub renders it, and the doc sections that comments cite.
 *
 * <p>Links: every inline link {@code [text](target)} and reference definition {@code [id]: target} outside code
 * (fenced blocks and code spans) whose target is not a URL must name a file or folder of the repository, and its
 * {@code #fragment} a heading of the target Markdown file. Anchors follow GitHub: the heading's text without markup,
 * lower case, every character that is not a letter, a digit, a space, {@code -} or {@code _} dropped, spaces turned
 * into hyphens; a repeated anchor gets {@code -1}, {@code -2}….
 *
 * <p>Citations: a comment (Java {@code //} and {@code /* … *}{@code /}, YAML {@code #}, XML {@code <!-- -->}) that
 * names a repository document — {@code README}, {@code bench/README.md}, {@code docs/operations.md} — must name a file
 * that exists; when a quoted section follows it ({@code docs/operations.md, "Timeouts"}, {@code README "Two commands"},
 * {@code docs/<page>.md ("<section>")}), the section must be a heading of that file or a paragraph's bold lead
 * ({@code **Shared services.**}).
 *
 * <pre>{@code
 * List<String> problems = new DocLinks(root).checkLinks(List.of(root.resolve("README.md")));
 * }</pre>
 *
 * <p>Not thread-safe; one instance per check.
 */
final class DocLinks
{
    private static final Pattern FENCE = Pattern.compile("^ {0,3}(```|~~~)");
    private static final Pattern HEADING = Pattern.compile("^ {0,3}(#{1,6})[ \\t]+(.*?)(?:[ \\t]+#+)?[ \\t]*$");
    private static final Pattern CODE_SPAN = Pattern.compile("(`+)(.+?)\\1", Pattern.DOTALL);
    /** {@code [text](target "title")}: the text may hold one level of brackets, the target no space. */
    private static final Pattern INLINE_LINK = Pattern.compile(
        "!?\\[((?:[^\\[\\]]|\\[[^\\[\\]]*\\])*)\\]\\(\\s*<?([^)\\s>]*)>?(?:\\s+\"[^\"]*\")?\\s*\\)");
    private static final Pattern REFERENCE = Pattern.compile("(?m)^ {0,3}\\[[^\\]]+\\]:\\s*<?(\\S+?)>?(?:\\s.*)?$");
    private static final Pattern BOLD_LEAD = Pattern.compile("(?m)^\\s*(?:[-*] )?\\*\\*([^*]+?)\\*\\*");
    private static final Pattern URL = Pattern.compile("^[a-zA-Z][a-zA-Z0-9+.-]*:");
    private static final Pattern HTML_ANCHOR = Pattern.compile("<a\\s+(?:name|id)=\"([^\"]+)\"");
    private static final Pattern CITATION = Pattern.compile(
        "(?<![\\w/.-])((?:[\\w.-]+/)*README(?:\\.md)?|(?:[\\w.-]+/)*docs/(?:[\\w.-]+/)*[\\w.-]+\\.md)(?![\\w/-])"
            + "(?:'s)?(?:(?:,?\\s+\\(?|\\()\\s*\"([^\"]{1,80})\")?");

    private final Path root;
    private final Map<Path, Doc> docs = new HashMap<>();

    DocLinks(Path root)
    {
        this.root = root.toAbsolutePath().normalize();
    }

    /** What a Markdown file offers to links and citations. */
    private record Doc(Set<String> anchors, Set<String> sections)
    {
    }

    /**
     * @param files Markdown files to check
     * @return one line per link that does not resolve, naming the file, the line and the target; empty when all do
     */
    List<String> checkLinks(List<Path> files)
    {
        List<String> problems = new ArrayList<>();
        for (Path file : files)
        {
            for (Link link : links(file))
            {
                String problem = resolve(file, link.target());
                if (problem != null)
                    problems.add(root.relativize(file) + ":" + link.line() + ": (" + link.target() + ") " + problem);
            }
        }
        return problems;
    }

    /**
     * @param files source and config files whose comments may cite documents
     * @return one line per citation whose file or section does not exist; empty when all do
     */
    List<String> checkCitations(List<Path> files)
    {
        List<String> problems = new ArrayList<>();
        for (Path file : files)
        {
            String comments = normalize(comments(file));
            Matcher m = CITATION.matcher(comments);
            while (m.find())
            {
                String name = m.group(1);
                Path target = root.resolve(name.endsWith("README") ? name + ".md" : name).normalize();
                String cited = name + (m.group(2) == null ? "" : " \"" + m.group(2) + "\"");
                if (!Files.isRegularFile(target))
                    problems.add(root.relativize(file) + ": " + cited + ": no such file");
                else if (m.group(2) != null && !hasSection(target, m.group(2)))
                    problems.add(root.relativize(file) + ": " + cited + ": no such heading or bold lead in " + name);
            }
        }
        return problems;
    }

    /** @return the GitHub anchor of a heading's Markdown text (before de-duplication) */
    static String slug(String headingMarkdown)
    {
        String text = plain(headingMarkdown).toLowerCase(Locale.ROOT);
        StringBuilder out = new StringBuilder(text.length());
        text.codePoints().forEach(c ->
        {
            if (c == ' ')
                out.append('-');
            else if (c == '-' || c == '_' || Character.isLetterOrDigit(c)
                || Character.getType(c) == Character.NON_SPACING_MARK || Character.getType(c) == Character.COMBINING_SPACING_MARK)
                out.appendCodePoint(c);
        });
        return out.toString();
    }

    /** The heading's text as GitHub renders it: links as their text, code spans as their content, no emphasis marks. */
    private static String plain(String markdown)
    {
        String s = INLINE_LINK.matcher(markdown).replaceAll("$1");
        s = CODE_SPAN.matcher(s).replaceAll("$2");
        return s.replaceAll("<[^>]+>", "").trim();
    }

    private record Link(int line, String target)
    {
    }

    private List<Link> links(Path file)
    {
        List<String> lines = read(file);
        List<Link> links = new ArrayList<>();
        boolean fenced = false;
        StringBuilder paragraph = new StringBuilder();
        int start = 0;
        for (int i = 0; i <= lines.size(); i++)
        {
            String line = i < lines.size() ? lines.get(i) : "";
            boolean fence = FENCE.matcher(line).find();
            if (fenced || fence || line.isBlank())
            {
                if (paragraph.length() > 0)
                    collect(paragraph.toString(), start, links);
                paragraph.setLength(0);
                if (fence)
                    fenced = !fenced;
                continue;
            }
            if (paragraph.length() == 0)
                start = i + 1;
            paragraph.append(line).append('\n');
        }
        return links;
    }

    /** Adds the links of one paragraph (code spans removed), each with the line it is on. */
    private static void collect(String paragraph, int firstLine, List<Link> links)
    {
        // Blank out code spans, keeping offsets and line breaks, so that a link's line can be counted.
        StringBuilder text = new StringBuilder(paragraph);
        Matcher code = CODE_SPAN.matcher(paragraph);
        while (code.find())
        {
            for (int i = code.start(); i < code.end(); i++)
                if (text.charAt(i) != '\n')
                    text.setCharAt(i, ' ');
        }
        for (Pattern p : List.of(INLINE_LINK, REFERENCE))
        {
            Matcher m = p.matcher(text);
            while (m.find())
            {
                int line = firstLine + (int)text.substring(0, m.start()).chars().filter(c -> c == '\n').count();
                links.add(new Link(line, m.group(p == INLINE_LINK ? 2 : 1)));
            }
        }
    }

    /** @return why the target does not resolve, or null when it does */
    private String resolve(Path file, String target)
    {
        if (target.isEmpty())
            return "empty target";
        if (URL.matcher(target).find())
            return null;
        int hash = target.indexOf('#');
        String path = hash < 0 ? target : target.substring(0, hash);
        String fragment = hash < 0 ? null : target.substring(hash + 1);
        Path doc = path.isEmpty() ? file
            : (path.startsWith("/") ? root.resolve(path.substring(1)) : file.getParent().resolve(path)).normalize();
        if (!doc.startsWith(root))
            return "points outside the repository";
        if (!Files.exists(doc))
            return "no such file";
        if (fragment == null)
            return null;
        if (!doc.toString().endsWith(".md"))
            return "an anchor into a file that is not Markdown";
        return doc(doc).anchors().contains(fragment) ? null : "no heading with anchor #" + fragment;
    }

    private boolean hasSection(Path file, String section)
    {
        Doc doc = doc(file);
        String wanted = section.trim().replaceAll("\\s+", " ").toLowerCase(Locale.ROOT);
        return doc.sections().contains(wanted) || doc.anchors().contains(slug(section));
    }

    private Doc doc(Path file)
    {
        return docs.computeIfAbsent(file.normalize(), f ->
        {
            Set<String> anchors = new LinkedHashSet<>();
            Set<String> sections = new LinkedHashSet<>();
            Map<String, Integer> seen = new HashMap<>();
            boolean fenced = false;
            StringBuilder prose = new StringBuilder();
            for (String line : read(f))
            {
                if (FENCE.matcher(line).find())
                {
                    fenced = !fenced;
                    continue;
                }
                if (fenced)
                    continue;
                prose.append(line).append('\n');
                Matcher h = HEADING.matcher(line);
                if (h.matches())
                {
                    String slug = slug(h.group(2));
                    int n = seen.merge(slug, 1, Integer::sum) - 1;
                    anchors.add(n == 0 ? slug : slug + "-" + n);
                    sections.add(plain(h.group(2)).replaceAll("\\s+", " ").toLowerCase(Locale.ROOT));
                }
                Matcher a = HTML_ANCHOR.matcher(line);
                while (a.find())
                    anchors.add(a.group(1));
            }
            Matcher bold = BOLD_LEAD.matcher(prose);
            while (bold.find())
                sections.add(plain(bold.group(1)).replaceAll("[.:]$", "").replaceAll("\\s+", " ").toLowerCase(Locale.ROOT));
            return new Doc(anchors, sections);
        });
    }

    /** The text of a file's comments, one comment after another. */
    static String comments(Path file)
    {
        String text = String.join("\n", read(file));
        String name = file.getFileName().toString();
        if (name.endsWith(".java"))
            return javaComments(text);
        StringBuilder out = new StringBuilder();
        if (name.endsWith(".xml"))
        {
            Matcher m = Pattern.compile("<!--(.*?)-->", Pattern.DOTALL).matcher(text);
            while (m.find())
                out.append(m.group(1)).append('\n');
        }
        else
        {
            Matcher m = Pattern.compile("(?m)(?:^|\\s)#(.*)$").matcher(text);
            while (m.find())
                out.append(m.group(1)).append('\n');
        }
        return out.toString();
    }

    /** Comments of Java source: what lies outside string, character and text-block literals after // or in /* … *}/. */
    private static String javaComments(String s)
    {
        StringBuilder out = new StringBuilder();
        int i = 0;
        int n = s.length();
        while (i < n)
        {
            char c = s.charAt(i);
            if (s.startsWith("\"\"\"", i))
            {
                int end = s.indexOf("\"\"\"", i + 3);
                while (end > 0 && s.charAt(end - 1) == '\\')
                    end = s.indexOf("\"\"\"", end + 1);
                i = end < 0 ? n : end + 3;
            }
            else if (c == '"' || c == '\'')
            {
                int j = i + 1;
                while (j < n && s.charAt(j) != c && s.charAt(j) != '\n')
                    j += s.charAt(j) == '\\' ? 2 : 1;
                i = j + 1;
            }
            else if (s.startsWith("//", i))
            {
                int end = s.indexOf('\n', i);
                end = end < 0 ? n : end;
                out.append(s, i + 2, end).append('\n');
                i = end;
            }
            else if (s.startsWith("/*", i))
            {
                int end = s.indexOf("*/", i + 2);
                end = end < 0 ? n : end;
                out.append(s, i + 2, end).append('\n');
                i = end + 2;
            }
            else
                i++;
        }
        return out.toString();
    }

    /** One line of text: each line break with the comment marks that follow it becomes one space. */
    private static String normalize(String comments)
    {
        return comments.replaceAll("\\s*\\n\\s*(?:\\*(?!/)|//|#)?\\s*", " ");
    }

    static Stream<Path> walk(Path root, String... suffixes)
    {
        try
        {
            List<Path> files = new ArrayList<>();
            Files.walkFileTree(root, new SimpleFileVisitor<>()
            {
                @Override
                public FileVisitResult preVisitDirectory(Path dir, BasicFileAttributes attrs)
                {
                    String name = dir.getFileName() == null ? "" : dir.getFileName().toString();
                    boolean skip = !dir.equals(root)
                        && (name.startsWith(".") || name.equals("target") || name.equals("node_modules"));
                    return skip ? FileVisitResult.SKIP_SUBTREE : FileVisitResult.CONTINUE;
                }

                @Override
                public FileVisitResult visitFile(Path file, BasicFileAttributes attrs)
                {
                    String name = file.getFileName().toString();
                    for (String suffix : suffixes)
                        if (name.endsWith(suffix))
                            files.add(file);
                    return FileVisitResult.CONTINUE;
                }
            });
            return files.stream().sorted();
        }
        catch (IOException e)
        {
            throw new UncheckedIOException(e);
        }
    }

    private static List<String> read(Path file)
    {
        try
        {
            return Files.readAllLines(file, StandardCharsets.UTF_8);
        }
        catch (IOException e)
        {
            throw new UncheckedIOException(e);
        }
    }
}
