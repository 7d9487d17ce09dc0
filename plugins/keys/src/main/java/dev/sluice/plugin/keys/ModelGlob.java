package dev.sluice.plugin.keys;

/**
 * A model-name pattern compiled once, when the keys are loaded: {@code *} matches any run of characters (including
 * none), {@code ?} exactly one, every other character itself, case-sensitively. The same rules as the router's globs;
 * plugins share no classes, so this is the keys plugin's own copy.
 *
 * <p>{@link #matches(String)} allocates nothing: a literal is one {@code equals}, a single trailing {@code *} one
 * {@code startsWith}, anything else a two-pointer scan that backtracks only to the last {@code *} (linear for the
 * patterns people write, never exponential).
 */
final class ModelGlob
{
    private final String glob;
    private final boolean literal;
    // For a glob of the form "prefix*" the prefix, else null.
    private final String prefix;

    private ModelGlob(String glob)
    {
        this.glob = glob;
        this.literal = glob.indexOf('*') < 0 && glob.indexOf('?') < 0;
        int star = glob.indexOf('*');
        this.prefix = star == glob.length() - 1 && glob.indexOf('?') < 0 ? glob.substring(0, star) : null;
    }

    /** @return the compiled form of {@code glob} (non-blank) */
    static ModelGlob compile(String glob)
    {
        return new ModelGlob(glob);
    }

    /** @return whether the whole of {@code model} matches */
    boolean matches(String model)
    {
        if (literal)
            return glob.equals(model);
        if (prefix != null)
            return model.startsWith(prefix);
        int p = 0;
        int t = 0;
        // Where the last '*' was in the pattern, and how much of the text it has swallowed so far.
        int star = -1;
        int resume = 0;
        while (t < model.length())
        {
            if (p < glob.length())
            {
                char c = glob.charAt(p);
                if (c == '*')
                {
                    star = p++;
                    resume = t;
                    continue;
                }
                if (c == '?' || c == model.charAt(t))
                {
                    p++;
                    t++;
                    continue;
                }
            }
            if (star < 0)
                return false;
            // Let the last '*' swallow one more character: whatever an earlier star could take instead, it can too.
            p = star + 1;
            t = ++resume;
        }
        while (p < glob.length() && glob.charAt(p) == '*')
            p++;
        return p == glob.length();
    }

    @Override
    public String toString()
    {
        return glob;
    }
}
