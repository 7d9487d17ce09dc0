package dev.sluice.support.codec;

import com.fasterxml.jackson.databind.JsonNode;
import dev.sluice.api.model.ChatRequest;
import dev.sluice.api.model.ContentPart;
import dev.sluice.api.model.Message;
import dev.sluice.api.model.Message.Role;
import dev.sluice.api.model.Tool;
import dev.sluice.support.codec.TokenCounter.Vocabulary;
import dev.sluice.support.json.Json;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

class TokenCounterTest
{
    private static ChatRequest request(String model, List<ContentPart> system, List<Message> messages, List<Tool> tools)
    {
        return new ChatRequest(model, system, messages, tools, null, null, null, null, false, false, null, null, null);
    }

    @Test
    void countsTextAsTiktokenDoes()
    {
        // tiktoken's own examples: "hello world" is 2 tokens in both vocabularies, "tiktoken is great!" 6 in cl100k_base.
        assertThat(TokenCounter.of(Vocabulary.O200K_BASE).count("hello world")).isEqualTo(2);
        assertThat(TokenCounter.of(Vocabulary.CL100K_BASE).count("hello world")).isEqualTo(2);
        assertThat(TokenCounter.of(Vocabulary.CL100K_BASE).count("tiktoken is great!")).isEqualTo(6);
        assertThat(TokenCounter.of(Vocabulary.O200K_BASE).count("")).isZero();
        assertThat(TokenCounter.of(Vocabulary.O200K_BASE).count(null)).isZero();
    }

    @Test
    void countsASpecialTokensSpellingAsOrdinaryText()
    {
        assertThat(TokenCounter.of(Vocabulary.O200K_BASE).count("<|endoftext|>")).isGreaterThan(1);
    }

    @Test
    void choosesCl100kForTheModelsThatUseIt()
    {
        assertThat(Vocabulary.of("gpt-4")).isEqualTo(Vocabulary.CL100K_BASE);
        assertThat(Vocabulary.of("gpt-4-turbo")).isEqualTo(Vocabulary.CL100K_BASE);
        assertThat(Vocabulary.of("openai/gpt-3.5-turbo")).isEqualTo(Vocabulary.CL100K_BASE);
        assertThat(Vocabulary.of("GPT-35-Turbo")).isEqualTo(Vocabulary.CL100K_BASE);
        assertThat(Vocabulary.of("text-embedding-3-small")).isEqualTo(Vocabulary.CL100K_BASE);
        assertThat(Vocabulary.of("gpt-4o")).isEqualTo(Vocabulary.O200K_BASE);
        assertThat(Vocabulary.of("gpt-4.1-mini")).isEqualTo(Vocabulary.O200K_BASE);
        assertThat(Vocabulary.of("claude-sonnet-4-5")).isEqualTo(Vocabulary.O200K_BASE);
        assertThat(Vocabulary.of(null)).isEqualTo(Vocabulary.O200K_BASE);
    }

    /**
     * The conversation of OpenAI's cookbook "How to count tokens with tiktoken", whose num_tokens_from_messages gives
     * 129 tokens for gpt-4 (cl100k_base) and 124 for gpt-4o (o200k_base), the counts OpenAI's API reported for it.
     */
    @Test
    void countsTheCookbookConversationAsOpenAiDoes()
    {
        List<Message> messages = new ArrayList<>();
        messages.add(named("example_user", "New synergies will help drive top-line growth."));
        messages.add(named("example_assistant", "Things working well together will increase revenue."));
        messages.add(named("example_user", "Let's circle back when we have more bandwidth to touch base on opportunities for"
            + " increased leverage."));
        messages.add(named("example_assistant", "Let's talk later when we're less busy about how to do better."));
        messages.add(Message.text(Role.USER, "This late pivot means we don't have time to boil the ocean for the client"
            + " deliverable."));
        List<ContentPart> system = List.of(new ContentPart.Text("You are a helpful, pattern-following assistant that"
            + " translates corporate jargon into plain English."));

        ChatRequest gpt4 = request("gpt-4", system, messages, List.of());
        assertThat(TokenCounter.of(Vocabulary.of(gpt4.model())).inputTokens(gpt4)).isEqualTo(129);
        ChatRequest gpt4o = request("gpt-4o", system, messages, List.of());
        assertThat(TokenCounter.of(Vocabulary.of(gpt4o.model())).inputTokens(gpt4o)).isEqualTo(124);
    }

    private static Message named(String name, String text)
    {
        return new Message(Role.SYSTEM, List.of(new ContentPart.Text(text)), name);
    }

    @Test
    void countsOneUserMessageWithItsFramingAndTheReplyPriming()
    {
        ChatRequest r = request("gpt-4o", List.of(), List.of(Message.text(Role.USER, "hello world")), List.of());
        assertThat(TokenCounter.of(Vocabulary.O200K_BASE).inputTokens(r))
            .isEqualTo(TokenCounter.REPLY_PRIMING + TokenCounter.PER_MESSAGE + 2);
    }

    @Test
    void countsToolDefinitionsCallsAndResults() throws Exception
    {
        TokenCounter counter = TokenCounter.of(Vocabulary.O200K_BASE);
        JsonNode schema = Json.MAPPER.readTree("{\"type\":\"object\",\"properties\":{\"city\":{\"type\":\"string\"}}}");
        Tool weather = new Tool("get_weather", "Current weather in a city", schema, null, null);
        List<Message> turns = List.of(Message.text(Role.USER, "Weather in Paris?"),
            new Message(Role.ASSISTANT, List.of(new ContentPart.ToolCall("call_1", "get_weather", "{\"city\":\"Paris\"}")), null),
            new Message(Role.TOOL, List.of(new ContentPart.ToolResult("call_1", List.of(new ContentPart.Text("sunny, 21 C")),
                false, null)), null));
        ChatRequest withoutTools = request("gpt-4o", List.of(), turns, List.of());
        ChatRequest withTools = request("gpt-4o", List.of(), turns, List.of(weather));

        long expectedTurns = TokenCounter.REPLY_PRIMING + 3L * TokenCounter.PER_MESSAGE + counter.count("Weather in Paris?")
            + counter.count("get_weather") + counter.count("{\"city\":\"Paris\"}") + counter.count("sunny, 21 C");
        assertThat(counter.inputTokens(withoutTools)).isEqualTo(expectedTurns);
        assertThat(counter.inputTokens(withTools) - counter.inputTokens(withoutTools)).isEqualTo(TokenCounter.PER_TOOL
            + counter.count("get_weather") + counter.count("Current weather in a city") + counter.count(schema.toString()));
    }

    @Test
    void countsImagesAtTheFixedEstimateAndIgnoresReasoning()
    {
        TokenCounter counter = TokenCounter.of(Vocabulary.O200K_BASE);
        ContentPart high = new ContentPart.Image("https://example.com/a.png", null, null, null, null);
        ContentPart low = new ContentPart.Image("https://example.com/a.png", null, null, "low", null);
        ChatRequest r = request("gpt-4o", List.of(), List.of(new Message(Role.USER, List.of(high, low), null),
            new Message(Role.ASSISTANT, List.of(new ContentPart.Thinking("a long chain of thought", "sig")), null)), List.of());
        assertThat(counter.inputTokens(r)).isEqualTo(TokenCounter.REPLY_PRIMING + 2L * TokenCounter.PER_MESSAGE
            + TokenCounter.PER_IMAGE + TokenCounter.PER_LOW_DETAIL_IMAGE);
    }

    @Test
    void loadsEachVocabularyOnceAndSharesIt() throws Exception
    {
        int threads = 8;
        CountDownLatch start = new CountDownLatch(1);
        List<CompletableFuture<TokenCounter>> seen = new ArrayList<>();
        for (int i = 0; i < threads; i++)
        {
            CompletableFuture<TokenCounter> f = new CompletableFuture<>();
            seen.add(f);
            Thread t = new Thread(() ->
            {
                try
                {
                    start.await();
                    TokenCounter.load(Vocabulary.O200K_BASE).whenComplete((c, e) -> f.complete(c));
                }
                catch (InterruptedException e)
                {
                    f.completeExceptionally(e);
                }
            });
            t.start();
        }
        start.countDown();
        TokenCounter first = seen.get(0).get(60, TimeUnit.SECONDS);
        assertThat(first).isNotNull();
        for (CompletableFuture<TokenCounter> f : seen)
            assertThat(f.get(60, TimeUnit.SECONDS)).isSameAs(first);
        assertThat(TokenCounter.loaded(Vocabulary.O200K_BASE)).isSameAs(first);
        assertThat(TokenCounter.of(Vocabulary.O200K_BASE)).isSameAs(first);
    }
}
