package dev.sluice.support.config;

/**
 * A model-name pattern compiled once at startup: {@code *} matches any run of characters (including none),
 * {@code ?} exactly one character, and every other character itself, case-sensitively. There is no escape:
 * model names never contain {@code *} or {@code ?}.
 *
 * <p>{@link #matches(String)} allocates nothing, since it runs for every exchange: plain names, prefixes
 * ({@code gpt-*}), suffixes and the catch-all ({@code *}) take a fast path, anything else a two-pointer scan
 * that backtracks only to the last {@code *} (linear for the patterns people write, never exponential).
 *
 * <p>Shared by the built-in plugins (router, keys, limits, guard) and offered to third-party ones, so that a model
 * pattern means the same in every binding of a config. Immutable and thread-safe.
 *
 * <pre>{@code
 * ModelGlob glob = ModelGlob.compile("claude-*-4?");
 * glob.matches("claude-sonnet-45"); // true
 * }</pre>
 */
public final class ModelGlob
{
    private enum Shape
    {
        LITERAL, PREFIX, SUFFIX, ANY, GENERAL
    }

    private final String glob;
    private final Shape shape;
    // For LITERAL the whole glob, for PREFIX/SUFFIX the text before/after the single '*', for GENERAL the glob.
    private final String fixed;

    private ModelGlob(String glob, Shape shape, String fixed)
    {
        this.glob = glob;
        this.shape = shape;
        this.fixed = fixed;
    }

    /**
     * Compiles {@code glob}.
     *
     * @param glob a non-blank model name or pattern
     * @return the compiled matcher
     */
    public static ModelGlob compile(String glob)
    {
        if (glob == null || glob.isBlank())
            throw new IllegalArgumentException("a model glob must not be blank");
        int stars = 0;
        boolean question = false;
        for (int i = 0; i < glob.length(); i++)
        {
            char c = glob.charAt(i);
            if (c == '*')
                stars++;
            else if (c == '?')
                question = true;
        }
        if (stars == 0 && !question)
            return new ModelGlob(glob, Shape.LITERAL, glob);
        if (!question && stars == glob.length())
            return new ModelGlob(glob, Shape.ANY, "");
        if (!question && stars == 1 && glob.endsWith("*"))
            return new ModelGlob(glob, Shape.PREFIX, glob.substring(0, glob.length() - 1));
        if (!question && stars == 1 && glob.startsWith("*"))
            return new ModelGlob(glob, Shape.SUFFIX, glob.substring(1));
        return new ModelGlob(glob, Shape.GENERAL, glob);
    }

    /** @return whether this pattern has no wildcard, so it names exactly one model */
    public boolean isLiteral()
    {
        return shape == Shape.LITERAL;
    }

    /** @return the pattern as written in the config */
    public String glob()
    {
        return glob;
    }

    /**
     * @param model a model name
     * @return whether the whole of {@code model} matches this pattern
     */
    public boolean matches(String model)
    {
        switch (shape)
        {
            case LITERAL:
                return fixed.equals(model);
            case PREFIX:
                return model.startsWith(fixed);
            case SUFFIX:
                return model.endsWith(fixed);
            case ANY:
                return true;
            default:
                return matchGeneral(fixed, model);
        }
    }

    private static boolean matchGeneral(String pattern, String text)
    {
        int p = 0;
        int t = 0;
        // Where the last '*' was in the pattern, and how much of the text it has swallowed so far.
        int star = -1;
        int resume = 0;
        while (t < text.length())
        {
            if (p < pattern.length())
            {
                char c = pattern.charAt(p);
                if (c == '*')
                {
                    star = p++;
                    resume = t;
                    continue;
                }
                if (c == '?' || c == text.charAt(t))
                {
                    p++;
                    t++;
                    continue;
                }
            }
            if (star < 0)
                return false;
            // Let the last '*' swallow one more character and retry what follows it. Backtracking to the last star
            // is enough: whatever an earlier star might have swallowed instead, the later one can swallow as well.
            p = star + 1;
            t = ++resume;
        }
        while (p < pattern.length() && pattern.charAt(p) == '*')
            p++;
        return p == pattern.length();
    }

    @Override
    public String toString()
    {
        return glob;
    }
}
