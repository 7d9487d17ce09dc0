package dev.sluice.bench.cell;

import dev.sluice.bench.load.LoadGenerator;

/**
 * The load generator named by {@code --generator}, loaded by class name so that a generator can be swapped without
 * touching the runner, and closed quietly after each run.
 */
final class LoadGenerators
{
    /**
     * @param className a {@link LoadGenerator} with a public no-arg constructor
     * @return a new instance
     * @throws ReflectiveOperationException if it is missing or cannot be made
     */
    static LoadGenerator newGenerator(String className) throws ReflectiveOperationException
    {
        return Class.forName(className).asSubclass(LoadGenerator.class).getDeclaredConstructor().newInstance();
    }

    /** Closes a generator whose run is over; a failure to close changes none of its figures. */
    static void closeQuietly(AutoCloseable c)
    {
        try
        {
            c.close();
        }
        catch (Exception x)
        {
            // The run's figures are already taken; a close failure changes none of them.
        }
    }

    private LoadGenerators()
    {
    }
}
