package dev.sluice.api;

/**
 * Version of the plugin SPI. The runtime announces it to PF4J as the system version; every plugin declares the
 * range it needs in its manifest ({@code Plugin-Requires: >=0.1.0}).
 *
 * <p><b>SemVer.</b> A patch release changes no signature. A minor release adds: new types, new {@code default}
 * methods on interfaces a plugin implements (bindings, factories, codecs, {@code EventStream}), new methods on
 * interfaces only the runtime implements ({@code Exchange}, {@code BindingContext}, {@code Completion},
 * {@code Scheduler}, {@code AdminRoutes}; given defaults too, so test doubles keep compiling), new enum constants
 * (a plugin's {@code switch} over an SPI enum needs a {@code default}). While the major version is 0, a minor release
 * may also remove or change a signature; its release notes name every such change, and a plugin built against it
 * declares that minor as its lower bound ({@code Plugin-Requires: >=0.8.0}). From 1.0.0 on, only a major release
 * may remove or change anything. Types marked {@link Experimental} may change in any minor release. The helpers of
 * {@code gateway-support} follow their own, looser rule (its package documentation states it).
 */
public final class SluiceApi
{
    /** The SPI version, {@code MAJOR.MINOR.PATCH}. */
    public static final String VERSION = "0.13.0";

    private SluiceApi()
    {
    }
}
