package dev.sluice.api;

/**
 * Version of the plugin SPI. The runtime announces it to PF4J as the system version; every plugin declares the
 * range it needs in its manifest ({@code Plugin-Requires: >=0.1.0}).
 *
 * <p><b>SemVer.</b> A patch release changes no signature. A minor release only adds: new types, new {@code default}
 * methods on interfaces a plugin implements (bindings, factories, codecs, {@code EventStream}), new methods on
 * interfaces only the runtime implements ({@code Exchange}, {@code BindingContext}, {@code Completion},
 * {@code Scheduler}, {@code AdminRoutes}; given defaults too, so test doubles keep compiling), new enum constants
 * (a plugin's {@code switch} over an SPI enum needs a {@code default}). A plugin built for {@code 0.N.x} loads and
 * links unchanged on every later {@code 0.M} with M &gt;= N. A major release may remove or change anything. Types
 * marked {@link Experimental} may change in a minor release.
 *
 * <p>History: 0.2.0 added response headers ({@code ResponseHeaders} on {@code Reply} and {@code GatewayException}).
 * 0.3.0 added what guardrail, logging and caching plugins need: the client's key and an identity on the
 * {@code Exchange}, the completion hook ({@code Completion}, {@code Exchange.onComplete},
 * {@code BindingContext.onComplete}), the shared executor and scheduler, admin endpoints, {@code close()} on
 * bindings and {@code BindingContext.checkOnly()}, and {@code Stage.FIRST_EVENT}. 0.4.0 added what request logs, metrics and caches
 * read: {@code Completion.route()}, {@code upstreamDialect()}, {@code events()}, {@code maxEventGapNanos()},
 * {@code ClientBinding.dialect()}, the shared attribute names in {@code Attributes} (with {@code TRACEPARENT} for
 * tracing), {@code Exchange.decodedRequest()}, {@code UpstreamHeaders.propagatingTrace()}, and
 * {@code BindingContext.runtimeStats()} and {@code advertisedModels()}. 0.5.0 added routing that survives failure:
 * attempts ({@code Attempt}, {@code Exchange.startAttempt}, {@code attempt()}, {@code attempts()},
 * {@code Completion.attempts()}), targets ({@code Target}, {@code BindingContext.target}), routes with targets
 * ({@code RouteConfig.targets()}, {@code settings()}, {@code RouteTarget}), {@code EventStream.contentStarted()},
 * the stream hold ({@code StreamHold}) and {@code KeyPool} (a client binding's keys used in turn).
 * 0.6.0 added the warm-up before ready ({@code Exchange.warmup()}, which bindings that keep state per client honour),
 * HTTP/2 over TLS to upstreams ({@code HttpVersion.H2}, the default for {@code https} URLs, and {@code auto}) and a
 * CA file for upstream TLS ({@code UpstreamOptions.caFile()}, {@code HttpOptionsConfig.caFile()}).
 */
public final class SluiceApi
{
    /** The SPI version, {@code MAJOR.MINOR.PATCH}. */
    public static final String VERSION = "0.6.0";

    private SluiceApi()
    {
    }
}
