package dev.sluice.plugin.guard;

/**
 * A model-name glob of the {@code models} option: {@code *} matches any run of characters, {@code ?} one character,
 * anything else itself, case-sensitively — the router's syntax. {@link #matches(String)} allocates nothing; it
 * backtracks only to the last {@code *}, so it is linear for the patterns people write.
 */
final class ModelGlob
{
    private final String glob;

    /** @param glob a non-blank pattern */
    ModelGlob(String glob)
    {
        this.glob = glob;
    }

    /** @return whether the whole of {@code model} matches */
    boolean matches(String model)
    {
        int p = 0;
        int t = 0;
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
