package dev.sluice.plugin.anthropic;

import dev.sluice.api.model.RawFrame;
import dev.sluice.api.testing.TestBody;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;

import static org.assertj.core.api.Assertions.assertThat;

/** When the same-dialect relay says an Anthropic stream's content started: what a router's stream hold waits for. */
class AnthropicRawStreamTest
{
    private TestBody body;

    @AfterEach
    void everyChunkReleasedExactlyOnce()
    {
        if (body != null)
            body.assertAllReleasedOnce();
    }

    private static byte[] event(String name, String data)
    {
        return ("event: " + name + "\ndata: " + data + "\n\n").getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void contentStartsAtTheFirstDeltaNotAtTheMessageStartBlockStartOrPing()
    {
        body = TestBody.of(
            event("message_start", "{\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"usage\":{\"input_tokens\":3}}}"),
            event("content_block_start", "{\"type\":\"content_block_start\",\"index\":0,\"content_block\":"
                + "{\"type\":\"text\",\"text\":\"\"}}"),
            event("ping", "{\"type\":\"ping\"}"),
            event("content_block_delta", "{\"type\":\"content_block_delta\",\"index\":0,\"delta\":"
                + "{\"type\":\"text_delta\",\"text\":\"Hi\"}}"));
        AnthropicRawStream stream = new AnthropicRawStream(body, usage -> { });

        for (int i = 0; i < 3; i++)
        {
            assertThat(stream.read()).isInstanceOf(RawFrame.class);
            assertThat(stream.contentStarted()).as("lifecycle event %d", i).isFalse();
        }
        assertThat(stream.read()).isInstanceOf(RawFrame.class);
        assertThat(stream.contentStarted()).isTrue();
        stream.cancel(new IllegalStateException("enough"));
    }

    @Test
    void theStartOfAToolUseBlockIsContent()
    {
        body = TestBody.of(event("content_block_start", "{\"type\":\"content_block_start\",\"index\":0,\"content_block\":"
            + "{\"type\":\"tool_use\",\"id\":\"t\",\"name\":\"get_time\",\"input\":{}}}"));
        AnthropicRawStream stream = new AnthropicRawStream(body, usage -> { });

        assertThat(stream.read()).isInstanceOf(RawFrame.class);
        assertThat(stream.contentStarted()).isTrue();
        stream.cancel(new IllegalStateException("enough"));
    }
}
