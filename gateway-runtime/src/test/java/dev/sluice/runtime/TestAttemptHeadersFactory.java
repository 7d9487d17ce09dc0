package dev.sluice.runtime;

import dev.sluice.api.GatewayException;
import dev.sluice.api.binding.BindingConfig;
import dev.sluice.api.binding.BindingContext;
import dev.sluice.api.binding.ProxyBinding;
import dev.sluice.api.binding.ProxyBindingFactory;
import dev.sluice.api.exchange.Exchange.Attempt;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.jar.Attributes;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import java.util.jar.Manifest;
import java.util.stream.Collectors;

/**
 * A tiny test binding of type {@code test-attempt-headers}, packaged by {@link #pluginJar} into a plugin jar of its own: it
 * passes every exchange on and writes the exchange's attempts, {@code TARGET=RESULT[/ERROR_KIND]} comma-separated
 * ({@code none} if there are none), where a test can read them. As they stand when the answer or the error comes back,
 * into an {@code x-test-attempts} response header, e.g. {@code south_offline=FAILED/UPSTREAM_UNAVAILABLE,south_big=PENDING}
 * (the answering attempt ends with the exchange, so it is still pending then); and with the option
 * {@code record_to: FILE}, as the exchange's completion lists them, one line per exchange appended to that file. Not
 * annotated with {@code @Extension}: the jar's index names it (see {@link TestIdentityFactory}).
 */
public final class TestAttemptHeadersFactory implements ProxyBindingFactory
{
    /** The header the attempts are written to. */
    static final String HEADER = "x-test-attempts";

    @Override
    public String type()
    {
        return "test-attempt-headers";
    }

    @Override
    public ProxyBinding create(BindingConfig config, BindingContext context)
    {
        String recordTo = config.options().path("record_to").asText(null);
        return (exchange, next) ->
        {
            if (recordTo != null)
                exchange.onComplete(completion -> append(Path.of(recordTo), attempts(completion.exchange().attempts())));
            return next.handle(exchange)
                .thenApply(reply -> reply.withHeaders(reply.headers().with(HEADER, attempts(exchange.attempts()))))
                .exceptionallyCompose(failure ->
                {
                    GatewayException error = GatewayException.of(failure);
                    return CompletableFuture.failedFuture(error.withHeaders(error.headers().with(HEADER,
                        attempts(exchange.attempts()))));
                });
        };
    }

    private static String attempts(List<Attempt> attempts)
    {
        if (attempts.isEmpty())
            return "none";
        return attempts.stream().map(a -> a.target() + "=" + a.result()
            + (a.result() == Attempt.Result.FAILED ? "/" + a.errorKind() : "")).collect(Collectors.joining(","));
    }

    private static void append(Path file, String line)
    {
        try
        {
            Files.writeString(file, line + "\n", StandardOpenOption.CREATE, StandardOpenOption.APPEND);
        }
        catch (IOException e)
        {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * Writes a plugin jar holding this class into {@code pluginsDir}, with the PF4J manifest and extension index.
     *
     * @return the jar
     */
    static Path pluginJar(Path pluginsDir) throws IOException
    {
        String classFile = TestAttemptHeadersFactory.class.getName().replace('.', '/') + ".class";
        Manifest manifest = new Manifest();
        Attributes main = manifest.getMainAttributes();
        main.put(Attributes.Name.MANIFEST_VERSION, "1.0");
        main.putValue("Plugin-Id", "test-attempt-headers");
        main.putValue("Plugin-Version", "0.0.1");
        main.putValue("Plugin-Requires", ">=0.5.0");
        main.putValue("Plugin-Provider", "Sluice tests");
        main.putValue("Plugin-Description", "The exchange's attempts in a response header");
        Path jar = pluginsDir.resolve("test-attempt-headers.jar");
        try (JarOutputStream out = new JarOutputStream(Files.newOutputStream(jar), manifest);
             InputStream in = TestAttemptHeadersFactory.class.getClassLoader().getResourceAsStream(classFile))
        {
            out.putNextEntry(new JarEntry("META-INF/extensions.idx"));
            out.write((TestAttemptHeadersFactory.class.getName() + "\n").getBytes(StandardCharsets.UTF_8));
            out.closeEntry();
            out.putNextEntry(new JarEntry(classFile));
            in.transferTo(out);
            out.closeEntry();
        }
        return jar;
    }
}
