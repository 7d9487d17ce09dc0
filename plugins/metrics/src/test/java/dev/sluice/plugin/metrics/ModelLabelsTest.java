package dev.sluice.plugin.metrics;

import org.junit.jupiter.api.Test;

import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

/** The {@code model} label takes only values the operator named: a client cannot create label values. */
class ModelLabelsTest
{
    private static String label(ModelLabels labels, String model)
    {
        return labels.value(labels.id(model));
    }

    @Test
    void advertisedAndLiteralModelsAreTheirOwnValueAndEveryOtherNameIsOther()
    {
        ModelLabels labels = new ModelLabels(List.of("fixed-model"), 3, () -> Set.of("demo", "echo"));

        assertThat(label(labels, "demo")).isEqualTo("demo");
        assertThat(label(labels, "echo")).isEqualTo("echo");
        assertThat(label(labels, "fixed-model")).isEqualTo("fixed-model");
        assertThat(label(labels, "gpt-4o")).isEqualTo("other");
        assertThat(label(labels, "")).isEqualTo("other");
        assertThat(label(labels, null)).isEqualTo("none");
        // A new String instance each time, as a request's parsed body gives: found by value.
        assertThat(labels.id(new String("demo".toCharArray()))).isEqualTo(labels.id("demo"));
        assertThat(labels.admitted()).containsExactly("demo", "echo", "fixed-model");
    }

    @Test
    void globsAdmitAtMostMaxModelsNamesThenOther()
    {
        ModelLabels labels = new ModelLabels(List.of("gpt-*", "claude-?-*", "named"), 3, Set::of);

        assertThat(label(labels, "gpt-4o")).isEqualTo("gpt-4o");
        assertThat(label(labels, "claude-3-haiku")).isEqualTo("claude-3-haiku");
        assertThat(label(labels, "gpt-4o")).as("already admitted").isEqualTo("gpt-4o");
        assertThat(label(labels, "gpt-4o-mini")).isEqualTo("gpt-4o-mini");
        assertThat(label(labels, "gpt-5")).as("the fourth glob match").isEqualTo("other");
        assertThat(label(labels, "named")).as("a literal entry does not count against max_models").isEqualTo("named");
        assertThat(label(labels, "claude-haiku")).as("no glob matches").isEqualTo("other");
        assertThat(labels.admitted()).containsExactly("gpt-4o", "claude-3-haiku", "gpt-4o-mini", "named");
    }

    @Test
    void twoHundredMadeUpNamesAddNoValue()
    {
        Set<String> advertised = new LinkedHashSet<>(List.of("demo"));
        ModelLabels labels = new ModelLabels(List.of("gpt-*"), 2, () -> advertised);
        label(labels, "demo");
        label(labels, "gpt-4o");

        for (int i = 0; i < 200; i++)
        {
            assertThat(label(labels, "junk-" + i)).isEqualTo("other");
            assertThat(label(labels, "gpt-junk-" + i)).isEqualTo(i == 0 ? "gpt-junk-0" : "other");
        }

        assertThat(labels.admitted()).containsExactly("demo", "gpt-4o", "gpt-junk-0");
    }

    @Test
    void readsTheAdvertisedModelsOnceAtTheFirstLookup()
    {
        int[] reads = {0};
        ModelLabels labels = new ModelLabels(List.of(), 1, () ->
        {
            reads[0]++;
            return Set.of("demo");
        });
        assertThat(reads[0]).as("not while the binding is created").isZero();

        for (int i = 0; i < 10; i++)
            label(labels, "junk-" + i);

        assertThat(reads[0]).isEqualTo(1);
    }

    @Test
    void serverAndRouteNamesAreBoundedToo()
    {
        LabelValues names = new LabelValues(2);

        assertThat(names.value(names.id("north"))).isEqualTo("north");
        assertThat(names.value(names.id("south"))).isEqualTo("south");
        assertThat(names.value(names.id(new String("north".toCharArray())))).isEqualTo("north");
        assertThat(names.value(names.id("third"))).isEqualTo("other");
        assertThat(names.value(names.id(null))).isEqualTo("none");
    }
}
