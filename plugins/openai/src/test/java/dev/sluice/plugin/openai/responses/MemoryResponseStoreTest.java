package dev.sluice.plugin.openai.responses;

import dev.sluice.api.model.ChatRequest;
import dev.sluice.api.model.ChatResponse;
import dev.sluice.api.model.ContentPart;
import dev.sluice.api.model.Message;
import dev.sluice.api.model.Usage;
import dev.sluice.plugin.openai.responses.ResponseStore.StoredResponse;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

class MemoryResponseStoreTest
{
    private static StoredResponse stored(String id, String text)
    {
        ChatRequest request = new ChatRequest("m", List.of(), List.of(new Message(Message.Role.USER,
            List.<ContentPart>of(new ContentPart.Text(text, null)), null)), List.of(), null, null, null, null, false, false, null,
            null, null);
        ChatResponse response = new ChatResponse(id, "m", List.<ContentPart>of(new ContentPart.Text("answer to " + text, null)),
            ChatResponse.StopReason.END_TURN, "stop", Usage.ZERO, 0, java.util.Map.of());
        return new StoredResponse("resp_" + id, request, response, 1);
    }

    @Test
    void aResponseIsFoundOnlyInTheScopeItWasStoredInUntilDeleted()
    {
        MemoryResponseStore store = new MemoryResponseStore(1 << 20, Duration.ofMinutes(5));
        StoredResponse one = stored("1", "hello");
        store.put("key:a", one).toCompletableFuture().join();

        assertThat(store.get("key:a", "resp_1").toCompletableFuture().join()).isSameAs(one);
        assertThat(store.get("key:b", "resp_1").toCompletableFuture().join()).isNull();
        assertThat(store.delete("key:b", "resp_1").toCompletableFuture().join()).isFalse();
        assertThat(store.delete("key:a", "resp_1").toCompletableFuture().join()).isTrue();
        assertThat(store.get("key:a", "resp_1").toCompletableFuture().join()).isNull();
        assertThat(store.delete("key:a", "resp_1").toCompletableFuture().join()).isFalse();
    }

    @Test
    void aResponseIsGoneOnceItsTimeToLiveHasPassed() throws InterruptedException
    {
        MemoryResponseStore store = new MemoryResponseStore(1 << 20, Duration.ofMillis(100));
        store.put("s", stored("1", "hello")).toCompletableFuture().join();
        Thread.sleep(250);
        assertThat(store.get("s", "resp_1").toCompletableFuture().join()).isNull();
    }

    @Test
    void theByteBoundEvictsOldResponsesAndKeepsTheWeightUnderIt()
    {
        String text = "x".repeat(10_000);
        int weight = MemoryResponseStore.weigh(stored("0", text));
        assertThat(weight).isGreaterThan(2 * 2 * text.length());
        MemoryResponseStore store = new MemoryResponseStore(10L * weight, Duration.ofMinutes(5));
        for (int i = 0; i < 100; i++)
            store.put("s", stored(Integer.toString(i), text)).toCompletableFuture().join();

        assertThat(store.weightedSize()).isLessThanOrEqualTo(10L * weight);
        int left = 0;
        for (int i = 0; i < 100; i++)
            left += store.get("s", "resp_" + i).toCompletableFuture().join() == null ? 0 : 1;
        assertThat(left).isBetween(1, 10);
    }
}
