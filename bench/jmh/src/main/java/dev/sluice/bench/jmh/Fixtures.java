package dev.sluice.bench.jmh;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;

/** Loads the benchmark inputs from {@code /fixtures/} on the class path. */
final class Fixtures
{
    private Fixtures()
    {
    }

    static byte[] bytes(String name)
    {
        try (InputStream in = Fixtures.class.getResourceAsStream("/fixtures/" + name))
        {
            if (in == null)
                throw new IllegalArgumentException("no fixture " + name);
            return in.readAllBytes();
        }
        catch (IOException e)
        {
            throw new UncheckedIOException(e);
        }
    }

    /** Fails the trial in setup, before anything is measured, if a fixture does not do what the benchmark assumes. */
    static void check(boolean condition, String message)
    {
        if (!condition)
            throw new IllegalStateException("fixture check failed: " + message);
    }
}
