package dev.sluice.bench.load;

import java.nio.charset.StandardCharsets;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Events as the providers send them, each as {@link SseScanner} captures it (field lines ended by {@code \n}).
 */
class ContentEventsTest
{
    private static final String OPENAI_HEAD = "data: {\"id\":\"chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG\",\"object\":" +
        "\"chat.completion.chunk\",\"created\":1741570283,\"model\":\"gpt-4o-2024-08-06\",\"service_tier\":\"default\"," +
        "\"system_fingerprint\":\"fp_f9f4fb6dbf\",\"choices\":[";

    private static boolean isContent(String event)
    {
        byte[] bytes = event.getBytes(StandardCharsets.UTF_8);
        // Captured into a larger array: only the first length bytes are the event.
        byte[] padded = new byte[bytes.length + 16];
        System.arraycopy(bytes, 0, padded, 0, bytes.length);
        padded[bytes.length] = '"';
        return ContentEvents.isContent(padded, bytes.length);
    }

    private static String openAi(String delta)
    {
        return OPENAI_HEAD + "{\"index\":0,\"delta\":" + delta + ",\"logprobs\":null,\"finish_reason\":null}]}\n";
    }

    @Test
    void openAisRoleChunkIsNotContentItsDeltasAre()
    {
        assertThat(isContent(openAi("{\"role\":\"assistant\",\"content\":\"\",\"refusal\":null}"))).isFalse();
        assertThat(isContent("data: {\"choices\":[{\"delta\":{\"role\":\"assistant\",\"content\":\"\"}}]}\n")).isFalse();
        assertThat(isContent(openAi("{\"content\":\"Hello\"}"))).isTrue();
        assertThat(isContent(openAi("{\"content\": \"Hello\"}"))).isTrue();
        assertThat(isContent(openAi("{\"refusal\":\"I can't help with that.\"}"))).isTrue();
        assertThat(isContent(openAi("{\"reasoning_content\":\"Let me think\"}"))).isTrue();
        assertThat(isContent(openAi("{\"reasoning_content\":\"\",\"content\":null}"))).isFalse();
    }

    @Test
    void openAisToolCallsAreContentEvenInTheRoleChunk()
    {
        assertThat(isContent(openAi("{\"role\":\"assistant\",\"content\":null,\"tool_calls\":[{\"index\":0,\"id\":" +
            "\"call_DdmO9pD3xa9XTPNJ32zg2hcA\",\"type\":\"function\",\"function\":{\"name\":\"get_weather\",\"arguments\":" +
            "\"\"}}],\"refusal\":null}"))).isTrue();
        assertThat(isContent(openAi("{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"{\\\"\"}}]}"))).isTrue();
    }

    @Test
    void openAisFinishUsageAndDoneAreNotContent()
    {
        assertThat(isContent(OPENAI_HEAD + "{\"index\":0,\"delta\":{},\"logprobs\":null,\"finish_reason\":\"stop\"}]}\n"))
            .isFalse();
        assertThat(isContent(OPENAI_HEAD + "],\"usage\":{\"prompt_tokens\":9,\"completion_tokens\":12,\"total_tokens\":21}}\n"))
            .isFalse();
        assertThat(isContent("data: [DONE]\n")).isFalse();
    }

    @Test
    void anthropicsContentIsItsDeltasAndToolUseBlocks()
    {
        assertThat(isContent("event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":" +
            "\"msg_1nZdL29xx5MUA1yADyHTEsnR8uuvGzszyY\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[]," +
            "\"model\":\"claude-sonnet-4-5\",\"stop_reason\":null,\"stop_sequence\":null,\"usage\":{\"input_tokens\":25," +
            "\"output_tokens\":1}}}\n")).isFalse();
        assertThat(isContent("event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0," +
            "\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n")).isFalse();
        assertThat(isContent("event: ping\ndata: {\"type\":\"ping\"}\n")).isFalse();
        assertThat(isContent("event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0," +
            "\"delta\":{\"type\":\"text_delta\",\"text\":\"Hello\"}}\n")).isTrue();
        assertThat(isContent("event:content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0," +
            "\"delta\":{\"type\":\"thinking_delta\",\"thinking\":\"Let me\"}}\n")).isTrue();
        assertThat(isContent("event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":1," +
            "\"content_block\":{\"type\":\"tool_use\",\"id\":\"toolu_01T1x1fJ34qAmk2tNTrN7Up6\",\"name\":\"get_weather\"," +
            "\"input\":{}}}\n")).isTrue();
    }

    @Test
    void anthropicsClosingEventsAreNotContentWhateverTheirDataHolds()
    {
        assertThat(isContent("event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n")).isFalse();
        assertThat(isContent("event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":" +
            "\"tool_use\",\"stop_sequence\":null},\"usage\":{\"output_tokens\":89}}\n")).isFalse();
        assertThat(isContent("event: message_stop\ndata: {\"type\":\"message_stop\"}\n")).isFalse();
        assertThat(isContent("event: content_block_deltas\ndata: {\"text\":\"x\"}\n")).isFalse();
    }

    @Test
    void geminisContentIsANonEmptyTextPartOrAFunctionCall()
    {
        assertThat(isContent("data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"\"}],\"role\":\"model\"}," +
            "\"index\":0}],\"modelVersion\":\"gemini-2.5-flash\",\"responseId\":\"mock\"}\n")).isFalse();
        assertThat(isContent("data: {\"candidates\":[{\"content\":{\"parts\":[],\"role\":\"model\"},\"index\":0}]}\n"))
            .isFalse();
        assertThat(isContent("data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"Hello\"}],\"role\":\"model\"}," +
            "\"index\":0}],\"modelVersion\":\"gemini-2.5-flash\"}\n")).isTrue();
        assertThat(isContent("data: {\"candidates\":[{\"content\":{\"parts\":[{\"functionCall\":{\"name\":\"get_weather\"," +
            "\"args\":{\"location\":\"Paris\"}}}],\"role\":\"model\"},\"index\":0}]}\n")).isTrue();
        assertThat(isContent("data: {\"candidates\":[{\"content\":{\"role\":\"model\"},\"finishReason\":\"STOP\"," +
            "\"index\":0}],\"usageMetadata\":{\"promptTokenCount\":8,\"candidatesTokenCount\":12}}\n")).isFalse();
    }

    @Test
    void aStringCutOffByTheCaptureRightAfterItsQuoteCountsAsContent()
    {
        String event = openAi("{\"content\":\"Hello\"}");
        int cut = event.indexOf("\"Hello") + 1;

        assertThat(ContentEvents.isContent(event.getBytes(StandardCharsets.UTF_8), cut)).isTrue();
        assertThat(ContentEvents.isContent(event.getBytes(StandardCharsets.UTF_8), cut - 1)).isFalse();
    }
}
