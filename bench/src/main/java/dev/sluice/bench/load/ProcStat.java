package dev.sluice.bench.load;

/**
 * The fields of a {@code /proc/<pid>/stat} (or {@code /proc/<pid>/task/<tid>/stat}) line, numbered as in proc(5).
 *
 * <p>The command name, field 2, is in parentheses and may itself hold spaces and parentheses: the fields after it are
 * split after the <i>last</i> {@code ')'}.</p>
 */
public final class ProcStat
{
    private ProcStat()
    {
    }

    /**
     * @param stat the content of a stat file
     * @return its fields from field 3 (the state) on, so that field {@code n} is element {@code n - 3}; null if the text
     *         is not a stat line
     */
    public static String[] fieldsFromState(String stat)
    {
        int open = stat.indexOf('(');
        int close = stat.lastIndexOf(')');
        if (open < 0 || close < open)
            return null;
        return stat.substring(close + 1).trim().split("\\s+");
    }

    /**
     * @param stat the content of a stat file
     * @return its command name (field 2) without the parentheses; null if the text is not a stat line
     */
    public static String name(String stat)
    {
        int open = stat.indexOf('(');
        int close = stat.lastIndexOf(')');
        return open < 0 || close < open ? null : stat.substring(open + 1, close);
    }
}
