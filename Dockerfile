# syntax=docker/dockerfile:1
# Sluice as a container image: docs/deploy.md.
#
#   docker build -t sluice .
#   docker run --rm -p 8080:8080 --stop-timeout 45 sluice run --config config/demo.yaml

# Build: the whole reactor, as the README's first command does. gateway-runtime assembles the distribution folder
# (bin/ lib/ plugins/ config/) in gateway-runtime/target/sluice; -DskipTests skips running the tests, not the phases
# that copy the plugin jars and bin/sluice into that folder.
FROM maven:3.9-eclipse-temurin-17 AS build
WORKDIR /src
COPY . .
RUN --mount=type=cache,target=/root/.m2 mvn -B -ntp package -DskipTests

# Run: a JRE, the distribution, and nothing of the build.
FROM eclipse-temurin:17-jre
# A fixed UID/GID, so that volumes, Kubernetes' runAsUser and file ownership on the host can name it.
RUN groupadd --system --gid 10001 sluice \
    && useradd --system --uid 10001 --gid 10001 --home-dir /opt/sluice --no-create-home --shell /usr/sbin/nologin sluice
# Owned by root and read-only to the gateway: the plugins/ folder of a running gateway is never written.
COPY --from=build /src/gateway-runtime/target/sluice /opt/sluice
WORKDIR /opt/sluice
# Every start of a container is a first start: a class-data-sharing archive recorded at exit would never be used, and
# writing it would take time out of the shutdown grace (docs/operations.md, "JVM flags").
ENV SLUICE_CDS=off
USER 10001:10001
# 8080: the API (HTTP/1.1 and h2c), /healthz and /readyz. 9091: the admin listener (/metrics, /keys …) when the config
# enables it on 0.0.0.0 (config/gateway.yaml keeps it on the loopback interface).
EXPOSE 8080 9091
# The JRE image need not carry curl or wget: bash's /dev/tcp asks /healthz on the API port, and the answer's status
# line must say 200.
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s --retries=3 \
    CMD ["bash", "-c", "exec 3<>/dev/tcp/127.0.0.1/8080 && printf 'GET /healthz HTTP/1.1\\r\\nHost: localhost\\r\\nConnection: close\\r\\n\\r\\n' >&3 && head -n 1 <&3 | grep -q ' 200 '"]
# The JVM's shutdown hook drains on SIGTERM for shutdown.grace (30s in config/gateway.yaml): stop the container with
# more time than that (docker stop -t 45, or --stop-timeout 45 at run), or the engine kills it mid-drain after 10 s.
STOPSIGNAL SIGTERM
# bin/sluice execs java with its DEFAULT_OPTS (the JVM flags of docs/operations.md, -Xmx1g among them), so the
# container runs with exactly the flags of any other installation; SLUICE_JAVA_OPTS replaces them, SLUICE_EXTRA_OPTS
# adds to them. Java replaces the script's shell and receives the stop signal itself.
ENTRYPOINT ["/opt/sluice/bin/sluice"]
CMD ["run", "--config", "/opt/sluice/config/gateway.yaml"]
