package dev.sluice.runtime;

import dev.sluice.api.config.ConfigException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A route with targets is checked at startup like every other part of the config: each mistake is an error that
 * names its exact path, found by {@code sluice check} with the distribution's router plugin.
 */
class FailoverConfigTest
{
    private static final Map<String, String> ENV = Map.of("A_URL", "http://127.0.0.1:1/v1", "B_URL", "http://127.0.0.1:2/v1");

    private static final String VALID = """
        listen: { port: 0 }
        bindings:
          north: { type: openai, kind: server, exit: router }
          router:
            type: router
            kind: proxy
            options: { attempt_headers: true, retry_budget: { ratio: 0.2, min_per_second: 5 }, admin_path: /routes }
            routes:
              - when: [ { model: "gpt-4o*" } ]
                targets:
                  - { exit: south_a, weight: 3 }
                  - { exit: south_b, priority: 1, with: { model: "gpt-4o-mini" } }
                balance: weighted
                retry: { attempts: 3, on: [ connect, timeout, 429, 5xx ], backoff: { initial: 100ms, max: 2s },
                         max_retry_after: 10s }
                stream: { commit: first_content, max_held_events: 64, max_held_bytes: 256KiB }
                eject: { consecutive: 5, base: 30s, max: 5m }
                timeout: 30s
                sticky: { header: x-session }
          south_a: { type: openai, kind: client, options: { url: "${{env.A_URL}}" } }
          south_b: { type: openai, kind: client, options: { url: "${{env.B_URL}}" } }
        """;

    @TempDir
    Path dir;

    private void check(String yaml) throws Exception
    {
        Path file = dir.resolve("gateway.yaml");
        Files.writeString(file, yaml);
        Sluice.check(Sluice.options(file, TestDist.plugins()).env(ENV::get));
    }

    private void assertCheckFails(String yaml, String message)
    {
        assertThatThrownBy(() -> check(yaml)).isInstanceOf(ConfigException.class).hasMessage(message);
    }

    private static String replace(String from, String to)
    {
        assertThat(VALID).contains(from);
        return VALID.replace(from, to);
    }

    @Test
    void acceptsARouteWithEveryKeyOfTargets() throws Exception
    {
        check(VALID);
    }

    @Test
    void rejectsARouteWithBothAnExitAndTargets()
    {
        assertCheckFails(replace("        targets:\n", "        exit: south_a\n        targets:\n"),
            "bindings.router.routes[0].targets: cannot be combined with exit (expected: exit for one binding, or targets for "
                + "several)");
    }

    @Test
    void rejectsATargetWithoutExit()
    {
        assertCheckFails(replace("{ exit: south_b, priority: 1,", "{ priority: 1,"),
            "bindings.router.routes[0].targets[1].exit: must be set (expected: the name of a binding)");
    }

    @Test
    void rejectsATargetWhoseExitIsNoBinding()
    {
        assertThatThrownBy(() -> check(replace("{ exit: south_b,", "{ exit: south_c,")))
            .isInstanceOf(ConfigException.class).hasMessageStartingWith("bindings.router.routes[0].targets[1].exit: ")
            .hasMessageContaining("south_c");
    }

    @Test
    void rejectsAnUnknownKeyInRetryWithItsPath()
    {
        assertCheckFails(replace("retry: { attempts: 3,", "retry: { atempts: 3,"),
            "bindings.router.routes[0].retry.atempts: unknown key (expected one of: attempts, backoff, max_retry_after, on)");
    }

    @Test
    void rejectsAnUnknownKeyOfATargetWithItsPath()
    {
        assertCheckFails(replace("weight: 3", "wieght: 3"),
            "bindings.router.routes[0].targets[0].wieght: unknown key (expected one of: priority, weight, with)");
    }

    @Test
    void rejectsAnUnknownBalanceListingTheThreePolicies()
    {
        assertCheckFails(replace("balance: weighted", "balance: random"),
            "bindings.router.routes[0].balance: value: \"random\" (expected: weighted, least_inflight or latency)");
    }

    @Test
    void rejectsAnUnknownFailureToRetryOnWithItsIndex()
    {
        assertCheckFails(replace("on: [ connect, timeout, 429, 5xx ]", "on: [ connect, 4xx ]"),
            "bindings.router.routes[0].retry.on[1]: value: \"4xx\" (expected: connect, timeout, 429, 5xx or context_window)");
    }
}
