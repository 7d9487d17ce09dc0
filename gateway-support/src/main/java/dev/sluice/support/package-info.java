/**
 * Helpers a plugin may use beside the SPI: what most dialects and policies would otherwise write again. Nothing here
 * is a contract a plugin implements or receives; those are {@code dev.sluice.api}'s.
 *
 * <ul>
 *   <li>{@code dev.sluice.support.json}: the shared Jackson factory and mapper ({@code Json}), the cheap body scan
 *       ({@code JsonPeek}), strict readers and writers for hand-written codecs ({@code JsonInput}, {@code JsonOutput},
 *       {@code JsonStrings}) and the structural validator ({@code JsonValidator}).</li>
 *   <li>{@code dev.sluice.support.sse}: server-sent events ({@code SseParser}) and newline-delimited JSON
 *       ({@code NdjsonLines}), incremental, over bytes as they arrive; one encoded event framed for a stream
 *       encoder ({@code EventFrame}).</li>
 *   <li>{@code dev.sluice.support.upstream}: a client binding's side of an upstream call: replies and relays
 *       ({@code UpstreamReplies}, {@code SseRelayStream}, {@code UpstreamEventStream}, {@code Bodies}), token counts
 *       sent or answered ({@code TokenCountReplies}), headers
 *       ({@code UpstreamHeaders}, {@code ForwardHeaders}), keys used in turn ({@code KeyPool}) and the stream hold
 *       ({@code StreamHold}).</li>
 *   <li>{@code dev.sluice.support.config}: strict option binding ({@code Options}), durations, model globs and the
 *       {@code http} options of a client binding ({@code HttpOptionsConfig}).</li>
 *   <li>{@code dev.sluice.support.codec}: translation between dialects' conventions ({@code Translation}), the
 *       tokenizer-free estimate ({@code TokenEstimate}), the tokenizer's count ({@code TokenCounter}, on jtokkit, which
 *       the runtime's {@code lib/} carries beside this library) and a canonical stream rebuilt into the whole answer
 *       as it is relayed ({@code StreamRecorder}, {@code RecordingStream}).</li>
 *   <li>{@code dev.sluice.support.dialect}: the scaffolding of a dialect plugin: server and client factories, the
 *       server binding with its limits, content types, upstream error mapping, stream decoding and block tracking.
 *       {@code plugin-examples/ollama} is a whole dialect built on it.</li>
 * </ul>
 *
 * <h2>Packaging</h2>
 * Like {@code gateway-api}, this library is the runtime's: its jar is in the distribution's {@code lib/}, the plugin
 * class loader takes {@code dev.sluice.support} from the parent, and a plugin declares it {@code provided} and never
 * bundles it. So every plugin shares one copy, and one {@code Json.FACTORY}.
 *
 * <h2>Stability</h2>
 * {@code gateway-api} follows SemVer: a minor SPI version only adds. This library promises less, so that helpers can
 * improve with the plugins that use them:
 * <ul>
 *   <li>It is released with the runtime and versioned by the SPI it ships with ({@code SluiceApi.VERSION}): a plugin's
 *       {@code Plugin-Requires} covers both.</li>
 *   <li>Within one minor SPI version ({@code 0.N.x}) no public signature is removed or changed incompatibly; a patch
 *       may fix behaviour (a stricter check, a corrected message).</li>
 *   <li>A minor SPI version may change or remove public members, but only ones marked {@link Deprecated} in the
 *       previous minor version, whose Javadoc names the replacement. A plugin built for {@code 0.N} that compiles
 *       without deprecation warnings therefore also links on {@code 0.N+1}; one that should survive longer bounds its
 *       range ({@code Plugin-Requires: >=0.N.0 & <0.N+2.0}) and is rebuilt.</li>
 *   <li>Types and members marked {@link dev.sluice.api.Experimental} may change in any minor version, without deprecation.</li>
 * </ul>
 */
package dev.sluice.support;
