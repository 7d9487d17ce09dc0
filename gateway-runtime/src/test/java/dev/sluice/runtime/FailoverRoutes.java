package dev.sluice.runtime;

import dev.sluice.mock.MockModels;

/**
 * The routes the observability tests share to make attempts: {@code failover/*} to a client binding that asks the
 * mock for {@code mock-error-500}, then (priority 1) to a healthy one; {@code strict/*} the same through a router whose
 * retry budget is zero, so its failed first attempt is not retried. YAML fragments with their indentation, for a
 * config whose {@code bindings} are at column 0.
 */
final class FailoverRoutes
{
    private FailoverRoutes()
    {
    }

    /** @return the two route entries, for a router's {@code routes} (entries at column 6) */
    static String routes(String healthy)
    {
        return """
                  - when: [ { model: "strict/*" } ]
                    exit: strict
                  - when: [ { model: "failover/*" } ]
                    targets:
                      - { exit: south_failing, with: { model: "%1$s" } }
                      - { exit: %2$s, priority: 1 }
                    eject: { consecutive: 100 }
            """.formatted(MockModels.ERROR_500, healthy).stripTrailing();
    }

    /**
     * @param healthy the client binding answering after the failure
     * @param url     the mock's base URL with its version ({@code http://127.0.0.1:PORT/v1})
     * @param http    the failing client binding's {@code http} block, or {@code null} for none
     * @return the {@code strict} router and the {@code south_failing} client binding (at column 2)
     */
    static String bindings(String healthy, String url, String http)
    {
        return """
              strict:
                type: router
                kind: proxy
                options: { retry_budget: { ratio: 0, min_per_second: 0 }, admin_path: /strict/routes }
                routes:
                  - when: [ { model: "*" } ]
                    targets:
                      - { exit: south_failing, with: { model: "%1$s" } }
                      - { exit: %2$s, priority: 1 }
                    eject: { consecutive: 100 }
              south_failing: { type: openai, kind: client, options: { url: "%3$s"%4$s } }
            """.formatted(MockModels.ERROR_500, healthy, url, http == null ? "" : ", http: " + http).stripTrailing();
    }
}
