package dev.sluice.bench.cell;

/**
 * The runner's console: one line per event, prefixed with the cell's name.
 */
final class CellLog
{
    /** @return a one-line description of {@code x}: its simple class name and message */
    static String message(Throwable x)
    {
        if (x == null)
            return "unknown";
        String m = x.getMessage();
        return x.getClass().getSimpleName() + (m == null ? "" : ": " + m);
    }

    /** Prints a progress line of {@code cell} on the console. */
    static void log(Cell cell, String line)
    {
        System.out.println("[" + cell.name() + "] " + line);
    }

    private CellLog()
    {
    }
}
