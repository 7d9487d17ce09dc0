package dev.sluice.plugin.anthropic;

import com.fasterxml.jackson.databind.JsonNode;
import dev.sluice.api.ErrorKind;
import dev.sluice.api.GatewayException;
import dev.sluice.support.json.Json;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.stream.IntStream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

class AnthropicModelListTest
{
    private static final List<String> MODELS = List.of("a", "b", "c", "d", "e");

    private static JsonNode page(List<String> models, String query) throws Exception
    {
        return Json.MAPPER.readTree(AnthropicModelList.INSTANCE.encodePage(models, query));
    }

    private static List<String> ids(JsonNode page)
    {
        return IntStream.range(0, page.get("data").size()).mapToObj(i -> page.get("data").get(i).get("id").asText()).toList();
    }

    @Test
    void pagesForwardFromTheStartOrAfterACursor() throws Exception
    {
        JsonNode first = page(MODELS, "limit=2");
        assertThat(ids(first)).containsExactly("a", "b");
        assertThat(first.get("has_more").asBoolean()).isTrue();
        assertThat(first.get("last_id").asText()).isEqualTo("b");
        assertThat(ids(page(MODELS, "limit=2&after_id=b"))).containsExactly("c", "d");
        JsonNode last = page(MODELS, "limit=2&after_id=d");
        assertThat(ids(last)).containsExactly("e");
        assertThat(last.get("has_more").asBoolean()).isFalse();
        // Exactly filling the page leaves nothing more.
        assertThat(page(MODELS, "limit=5").get("has_more").asBoolean()).isFalse();
        assertThat(page(MODELS, "limit=1000").get("data")).hasSize(5);
        assertThat(page(MODELS, null).get("data")).hasSize(5);
    }

    @Test
    void defaultsToTwentyModels() throws Exception
    {
        List<String> many = IntStream.range(0, 25).mapToObj(i -> "m" + i).toList();
        JsonNode page = page(many, "");
        assertThat(page.get("data")).hasSize(20);
        assertThat(page.get("has_more").asBoolean()).isTrue();
    }

    @Test
    void pagesBackwardBeforeACursor() throws Exception
    {
        JsonNode page = page(MODELS, "limit=2&before_id=e");
        assertThat(ids(page)).containsExactly("c", "d");
        assertThat(page.get("has_more").asBoolean()).isTrue();
        assertThat(page.get("first_id").asText()).isEqualTo("c");
        JsonNode start = page(MODELS, "limit=2&before_id=b");
        assertThat(ids(start)).containsExactly("a");
        assertThat(start.get("has_more").asBoolean()).isFalse();
        JsonNode none = page(MODELS, "before_id=a");
        assertThat(none.get("data")).isEmpty();
        assertThat(none.get("first_id").isNull()).isTrue();
        assertThat(none.get("has_more").asBoolean()).isFalse();
    }

    @Test
    void refusesParametersItCannotPageByNamingThem()
    {
        assertRefused("limit=0", "limit: value: \"0\" (expected: an integer from 1 to 1000)");
        assertRefused("limit=1001", "limit: value: \"1001\" (expected: an integer from 1 to 1000)");
        assertRefused("limit=99999999999", "limit: value: \"99999999999\" (expected: an integer from 1 to 1000)");
        assertRefused("limit=", "limit: value: \"\" (expected: an integer from 1 to 1000)");
        assertRefused("after_id=z", "after_id: value: \"z\" names no model of this listing (expected: the first_id or"
            + " last_id of a page)");
        assertRefused("before_id=z", "before_id: value: \"z\" names no model of this listing (expected: the first_id or"
            + " last_id of a page)");
        assertRefused("after_id=a&before_id=c", "before_id: is set with after_id (expected: at most one of after_id and"
            + " before_id)");
    }

    private static void assertRefused(String query, String message)
    {
        GatewayException e = catchThrowableOfType(GatewayException.class,
            () -> AnthropicModelList.INSTANCE.encodePage(MODELS, query));
        assertThat(e).as(query).isNotNull();
        assertThat(e.kind()).isEqualTo(ErrorKind.INVALID_REQUEST);
        assertThat(e.status()).isEqualTo(400);
        assertThat(e.getMessage()).isEqualTo(message);
    }
}
