package dev.sluice.runtime;

import dev.sluice.api.binding.BindingConfig;
import dev.sluice.api.binding.BindingContext;
import dev.sluice.api.binding.ProxyBinding;
import dev.sluice.api.binding.ProxyBindingFactory;
import dev.sluice.api.exchange.Attributes;
import dev.sluice.api.exchange.Reply;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import java.util.jar.Manifest;

/**
 * A tiny test binding of type {@code test-attributes}, packaged by {@link #pluginJar} into a plugin jar of its own: it
 * stands in for the bindings that set the shared exchange attributes ({@link Attributes}) until the plugins that own
 * them exist. {@code x-test-cache: hit|miss|bypass} sets {@link Attributes#CACHE}, and {@code hit} answers at once with
 * a fixed OpenAI answer, as a response cache would, without calling its exit; {@code x-test-cost: 0.5} sets
 * {@link Attributes#COST_USD} in a per-exchange completion listener, where a binding that prices the provider's usage
 * sets it. Not annotated with {@code @Extension}: the jar's index names it (see {@link TestIdentityFactory}).
 */
public final class TestAttributesFactory implements ProxyBindingFactory
{
    /** The answer of a cache hit: an OpenAI chat completion without usage. */
    static final String HIT_BODY = "{\"id\":\"chatcmpl-cached\",\"object\":\"chat.completion\",\"created\":0,\"model\":\"gpt-4o\","
        + "\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":\"cached\"},\"finish_reason\":\"stop\"}]}";

    @Override
    public String type()
    {
        return "test-attributes";
    }

    @Override
    public ProxyBinding create(BindingConfig config, BindingContext context)
    {
        return (exchange, next) ->
        {
            String cache = exchange.headers().get("x-test-cache");
            String cost = exchange.headers().get("x-test-cost");
            if (cache != null)
                exchange.attribute(Attributes.CACHE, cache);
            if (cost != null)
                exchange.onComplete(c -> exchange.attribute(Attributes.COST_USD, Double.valueOf(cost)));
            if ("hit".equals(cache))
            {
                return CompletableFuture.completedFuture(new Reply.Bytes(200, "application/json",
                    HIT_BODY.getBytes(StandardCharsets.UTF_8), null));
            }
            return next.handle(exchange);
        };
    }

    /**
     * Writes a plugin jar holding this class into {@code pluginsDir}, with the PF4J manifest and extension index.
     *
     * @return the jar
     */
    static Path pluginJar(Path pluginsDir) throws IOException
    {
        String classFile = TestAttributesFactory.class.getName().replace('.', '/') + ".class";
        Manifest manifest = new Manifest();
        java.util.jar.Attributes main = manifest.getMainAttributes();
        main.put(java.util.jar.Attributes.Name.MANIFEST_VERSION, "1.0");
        main.putValue("Plugin-Id", "test-attributes");
        main.putValue("Plugin-Version", "0.0.1");
        main.putValue("Plugin-Requires", ">=0.4.0");
        main.putValue("Plugin-Provider", "Sluice tests");
        main.putValue("Plugin-Description", "Exchange attributes from x-test-* headers");
        Path jar = pluginsDir.resolve("test-attributes.jar");
        try (JarOutputStream out = new JarOutputStream(Files.newOutputStream(jar), manifest);
             InputStream in = TestAttributesFactory.class.getClassLoader().getResourceAsStream(classFile))
        {
            out.putNextEntry(new JarEntry("META-INF/extensions.idx"));
            out.write((TestAttributesFactory.class.getName() + "\n").getBytes(StandardCharsets.UTF_8));
            out.closeEntry();
            out.putNextEntry(new JarEntry(classFile));
            in.transferTo(out);
            out.closeEntry();
        }
        return jar;
    }
}
