package dev.sluice.api.upstream;

/** An upstream response whose headers have arrived; the body is read from {@link #body()}. */
public interface UpstreamResponse
{
    /** @return the HTTP status */
    int status();

    /** @return the first value of header {@code name}, or {@code null} */
    String header(String name);

    /** @return the body; must be read to the end or {@linkplain BodySource#fail(Throwable) failed} */
    BodySource body();
}
