package dev.sluice.api;

/**
 * Version of the plugin SPI. The runtime announces it to PF4J as the system version; every plugin declares the
 * range it needs in its manifest ({@code Plugin-Requires: >=0.1.0}). 0.2.0 added response headers ({@code ResponseHeaders} on {@code Reply} and {@code GatewayException}); a plugin built for 0.1.0 loads and links unchanged.
 *
 * <p>SemVer: a minor release only adds (new records, new {@code default} methods); a major release may break.
 * Types marked {@link Experimental} may change in a minor release.
 */
public final class SluiceApi
{
    /** The SPI version, {@code MAJOR.MINOR.PATCH}. */
    public static final String VERSION = "0.2.0";

    private SluiceApi()
    {
    }
}
