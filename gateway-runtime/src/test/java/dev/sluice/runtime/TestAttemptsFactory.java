package dev.sluice.runtime;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.sluice.api.admin.AdminRoutes.AdminResponse;
import dev.sluice.api.binding.BindingConfig;
import dev.sluice.api.binding.BindingContext;
import dev.sluice.api.binding.ProxyBinding;
import dev.sluice.api.binding.ProxyBindingFactory;
import dev.sluice.api.exchange.Exchange.Attempt;
import dev.sluice.api.exchange.Completion;
import dev.sluice.support.json.Json;
import org.eclipse.jetty.client.ContentResponse;
import org.eclipse.jetty.client.HttpClient;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.TimeUnit;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import java.util.jar.Manifest;

/**
 * A tiny test binding of type {@code test-attempts}, packaged by {@link #pluginJar} into a plugin jar of its own: a
 * proxy that passes every exchange on and copies its {@link Completion} — outcome, status and every
 * {@linkplain dev.sluice.api.exchange.Exchange#attempts() attempt} — when it is over; {@code GET /test-attempts} on the admin listener serves
 * the last 256 as {@code {"completions":[…]}}, newest last. Not annotated with {@code @Extension}: the jar's index names
 * it (see {@link TestIdentityFactory}).
 */
public final class TestAttemptsFactory implements ProxyBindingFactory
{
    /** Where the admin listener serves what the binding saw. */
    static final String PATH = "/test-attempts";

    private static final int KEPT = 256;

    @Override
    public String type()
    {
        return "test-attempts";
    }

    @Override
    public ProxyBinding create(BindingConfig config, BindingContext context)
    {
        ConcurrentLinkedDeque<ObjectNode> seen = new ConcurrentLinkedDeque<>();
        if (!context.checkOnly())
        {
            context.admin().add("GET", PATH, request ->
            {
                ObjectNode root = Json.MAPPER.createObjectNode();
                ArrayNode list = root.putArray("completions");
                seen.forEach(list::add);
                return CompletableFuture.completedFuture(AdminResponse.json(200, root.toString()));
            });
        }
        return (exchange, next) ->
        {
            exchange.onComplete(c ->
            {
                seen.addLast(copy(c));
                while (seen.size() > KEPT)
                    seen.pollFirst();
            });
            return next.handle(exchange);
        };
    }

    private static ObjectNode copy(Completion c)
    {
        ObjectNode o = Json.MAPPER.createObjectNode();
        o.put("id", c.id());
        o.put("outcome", c.outcome().name());
        o.put("status", c.status());
        o.put("route", c.route());
        ArrayNode attempts = o.putArray("attempts");
        for (Attempt a : c.exchange() == null ? java.util.List.<Attempt>of() : c.exchange().attempts())
        {
            ObjectNode n = attempts.addObject();
            n.put("number", a.number());
            n.put("target", a.target());
            n.put("target_model", a.targetModel());
            n.put("result", a.result().name());
            n.put("status", a.status());
            n.put("error_kind", a.errorKind() == null ? null : a.errorKind().name());
            n.put("error_message", a.errorMessage());
        }
        return o;
    }

    /**
     * Reads the completion of the exchange {@code id} from the binding's admin endpoint, waiting for it: the listener
     * runs once the last byte was handed to the connection, which may be a moment after the client had its answer.
     */
    static JsonNode await(HttpClient http, String adminUrl, String id) throws Exception
    {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (true)
        {
            ContentResponse r = http.newRequest(adminUrl).timeout(10, TimeUnit.SECONDS).send();
            if (r.getStatus() != 200)
                throw new AssertionError("GET " + adminUrl + ": " + r.getStatus() + " " + r.getContentAsString());
            for (JsonNode completion : Json.MAPPER.readTree(r.getContentAsString()).get("completions"))
            {
                if (completion.get("id").asText().equals(id))
                    return completion;
            }
            if (System.nanoTime() > deadline)
                throw new AssertionError("no completion of " + id + " in " + r.getContentAsString());
            Thread.sleep(10);
        }
    }

    /**
     * Writes a plugin jar holding this class into {@code pluginsDir}, with the PF4J manifest and extension index.
     *
     * @return the jar
     */
    static Path pluginJar(Path pluginsDir) throws IOException
    {
        String classFile = TestAttemptsFactory.class.getName().replace('.', '/') + ".class";
        Manifest manifest = new Manifest();
        java.util.jar.Attributes main = manifest.getMainAttributes();
        main.put(java.util.jar.Attributes.Name.MANIFEST_VERSION, "1.0");
        main.putValue("Plugin-Id", "test-attempts");
        main.putValue("Plugin-Version", "0.0.1");
        main.putValue("Plugin-Requires", ">=0.5.0");
        main.putValue("Plugin-Provider", "Sluice tests");
        main.putValue("Plugin-Description", "The attempts of finished exchanges, on the admin listener");
        Path jar = pluginsDir.resolve("test-attempts.jar");
        try (JarOutputStream out = new JarOutputStream(Files.newOutputStream(jar), manifest);
             InputStream in = TestAttemptsFactory.class.getClassLoader().getResourceAsStream(classFile))
        {
            out.putNextEntry(new JarEntry("META-INF/extensions.idx"));
            out.write((TestAttemptsFactory.class.getName() + "\n").getBytes(StandardCharsets.UTF_8));
            out.closeEntry();
            out.putNextEntry(new JarEntry(classFile));
            in.transferTo(out);
            out.closeEntry();
        }
        return jar;
    }
}
