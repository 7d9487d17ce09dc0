package dev.sluice.bench;

import dev.sluice.bench.cell.BenchCommand;

/**
 * The benchmark's entry point: {@code java -cp <bench jar + deps> dev.sluice.bench.Bench [CELL ...|all] [--reps N]
 * [--quick] …}. {@code bench/run} builds the project and calls this; see {@code bench/README.md}.
 */
public final class Bench
{
    private Bench()
    {
    }

    /**
     * Runs the cells and exits: 0 when every cell ran, 1 when one failed, 2 for a usage error.
     *
     * @param args the command line
     */
    public static void main(String[] args)
    {
        System.exit(BenchCommand.run(args));
    }
}
