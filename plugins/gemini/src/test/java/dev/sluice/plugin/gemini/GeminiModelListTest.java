package dev.sluice.plugin.gemini;

import com.fasterxml.jackson.databind.JsonNode;
import dev.sluice.api.ErrorKind;
import dev.sluice.api.GatewayException;
import dev.sluice.support.json.Json;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.stream.IntStream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

class GeminiModelListTest
{
    private static final List<String> MODELS = List.of("a", "tunedModels/b", "c", "d", "e");

    private static JsonNode page(List<String> models, String query) throws Exception
    {
        return Json.MAPPER.readTree(GeminiModelList.INSTANCE.encodePage(models, query));
    }

    private static List<String> names(JsonNode page)
    {
        List<String> names = new ArrayList<>();
        page.get("models").forEach(m -> names.add(m.get("name").asText()));
        return names;
    }

    @Test
    void walksEveryModelOnceByItsTokens() throws Exception
    {
        List<String> seen = new ArrayList<>();
        String token = null;
        int pages = 0;
        do
        {
            JsonNode page = page(MODELS, "pageSize=2" + (token == null ? "" : "&pageToken=" + token));
            seen.addAll(names(page));
            token = page.has("nextPageToken") ? page.get("nextPageToken").asText() : null;
            pages++;
        }
        while (token != null);
        assertThat(pages).isEqualTo(3);
        assertThat(seen).containsExactly("models/a", "tunedModels/b", "models/c", "models/d", "models/e");
    }

    @Test
    void readsZeroAsTheDefaultAndCapsLargePages() throws Exception
    {
        List<String> many = IntStream.range(0, 1200).mapToObj(i -> "m" + i).toList();
        assertThat(page(many, null).get("models")).hasSize(50);
        assertThat(page(many, "pageSize=0").get("models")).hasSize(50);
        assertThat(page(many, "pageSize=99999999999").get("models")).hasSize(1000);
        JsonNode all = page(MODELS, "pageSize=5");
        assertThat(all.get("models")).hasSize(5);
        assertThat(all.has("nextPageToken")).isFalse();
    }

    @Test
    void refusesANegativeSizeAndATokenOfNoPlace()
    {
        assertRefused("pageSize=-1", "pageSize: value: \"-1\" (expected: an integer from 0 to 1000; 0 or unset means 50)");
        assertRefused("pageSize=1.5", "pageSize: value: \"1.5\" (expected: an integer from 0 to 1000; 0 or unset means 50)");
        assertRefused("pageToken=***", "pageToken: value: \"***\" marks no place in this listing (expected: the"
            + " nextPageToken of a previous page, with the same key)");
        String unknown = Base64.getUrlEncoder().withoutPadding().encodeToString("z".getBytes(StandardCharsets.UTF_8));
        assertRefused("pageToken=" + unknown, "pageToken: value: \"" + unknown + "\" marks no place in this listing"
            + " (expected: the nextPageToken of a previous page, with the same key)");
    }

    private static void assertRefused(String query, String message)
    {
        GatewayException e = catchThrowableOfType(GatewayException.class,
            () -> GeminiModelList.INSTANCE.encodePage(MODELS, query));
        assertThat(e).as(query).isNotNull();
        assertThat(e.kind()).isEqualTo(ErrorKind.INVALID_REQUEST);
        assertThat(e.status()).isEqualTo(400);
        assertThat(e.getMessage()).isEqualTo(message);
    }
}
