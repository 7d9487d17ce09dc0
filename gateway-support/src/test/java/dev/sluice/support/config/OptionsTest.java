package dev.sluice.support.config;

import dev.sluice.api.config.ConfigException;
import dev.sluice.support.json.Json;
import com.fasterxml.jackson.databind.JsonNode;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class OptionsTest
{
    record Inner(String name, Duration timeout)
    {
    }

    record Outer(List<String> words, Integer maxConnections, Inner inner, List<Inner> items)
    {
        Outer
        {
            if (words == null || words.isEmpty())
                throw new IllegalArgumentException("words: must be set");
        }
    }

    record Empty()
    {
    }

    private static JsonNode json(String text) throws Exception
    {
        return Json.MAPPER.readTree(text);
    }

    @Test
    void bindsSnakeCaseKeysAndDurations() throws Exception
    {
        Outer o = Options.bind(json("{\"words\":[\"a\"],\"max_connections\":3,\"inner\":{\"name\":\"x\",\"timeout\":\"250ms\"}}"), Outer.class, "b.o");
        assertThat(o.maxConnections()).isEqualTo(3);
        assertThat(o.inner().timeout()).isEqualTo(Duration.ofMillis(250));
    }

    @Test
    void namesTheMisspeltKeyEvenWhenARequiredKeyIsMissing()
    {
        assertThatThrownBy(() -> Options.bind(json("{\"wordz\":[\"a\"]}"), Outer.class, "bindings.d.options"))
            .isInstanceOf(ConfigException.class)
            .hasMessage("bindings.d.options.wordz: unknown key (expected one of: inner, items, max_connections, words)");
    }

    @Test
    void namesNestedAndIndexedPaths()
    {
        assertThatThrownBy(() -> Options.bind(json("{\"words\":[\"a\"],\"items\":[{\"name\":\"x\"},{\"nme\":\"y\"}]}"), Outer.class, "p"))
            .isInstanceOf(ConfigException.class).hasMessageStartingWith("p.items[1].nme: unknown key");
        assertThatThrownBy(() -> Options.bind(json("{\"words\":[\"a\"],\"inner\":{\"timeout\":\"soon\"}}"), Outer.class, "p"))
            .isInstanceOf(ConfigException.class).hasMessageStartingWith("p.inner.timeout: value: \"soon\"");
    }

    @Test
    void reportsValidationFailuresWithTheFieldPath()
    {
        assertThatThrownBy(() -> Options.bind(json("{}"), Outer.class, "p"))
            .isInstanceOf(ConfigException.class).hasMessage("p.words: must be set");
    }

    @Test
    void rejectsWrongScalarTypes()
    {
        assertThatThrownBy(() -> Options.bind(json("{\"words\":[\"a\"],\"max_connections\":\"many\"}"), Outer.class, "p"))
            .isInstanceOf(ConfigException.class).hasMessageStartingWith("p.max_connections: ");
        assertThatThrownBy(() -> Options.bind(json("{\"words\":[\"a\"],\"inner\":{\"name\":4}}"), Outer.class, "p"))
            .isInstanceOf(ConfigException.class).hasMessageStartingWith("p.inner.name: ");
    }

    @Test
    void emptyOptionsRecordRejectsAnyKey()
    {
        assertThatThrownBy(() -> Options.bind(json("{\"x\":1}"), Empty.class, "p"))
            .isInstanceOf(ConfigException.class).hasMessage("p.x: unknown key (expected: no keys)");
        assertThat(Options.bind(null, Empty.class, "p")).isNotNull();
    }
}
