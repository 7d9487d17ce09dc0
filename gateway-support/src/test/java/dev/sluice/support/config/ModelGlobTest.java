package dev.sluice.support.config;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import static org.assertj.core.api.Assertions.assertThat;

class ModelGlobTest
{
    @ParameterizedTest(name = "{0} ~ {1} = {2}")
    @CsvSource({
        "gpt-4o, gpt-4o, true",
        "gpt-4o, gpt-4o-mini, false",
        "gpt-4o, GPT-4o, false",
        "gpt-*, gpt-4o, true",
        "gpt-*, gpt-, true",
        "gpt-*, chatgpt-4o, false",
        "*-mini, gpt-4o-mini, true",
        "*-mini, gpt-4o-mini-2, false",
        "*, anything, true",
        "**, anything, true",
        "o?-mini, o3-mini, true",
        "o?-mini, o-mini, false",
        "o?-mini, o33-mini, false",
        "claude-*-4?, claude-sonnet-45, true",
        "claude-*-4?, claude-sonnet-4, false",
        "claude-*-4?, claude-3-5-sonnet-4x, true",
        "*a*b*c, xxaxxbxxc, true",
        "*a*b*c, xxaxxcxxb, false",
        "a*a*a*b, aaaaaaaaaaaaaaaaaaaaaaaaaaaaaab, true",
        "a*a*a*b, aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa, false",
        "?, x, true",
        "?, xy, false",
        "*x, x, true",
        "x*y*, xay, true",
        "x*y*, xa, false",
    })
    void matchesLikeAShellGlob(String glob, String model, boolean expected)
    {
        assertThat(ModelGlob.compile(glob).matches(model)).isEqualTo(expected);
    }

    @ParameterizedTest
    @CsvSource({"gpt-4o, true", "gpt-*, false", "o?, false", "*, false"})
    void isLiteralOnlyWithoutWildcards(String glob, boolean literal)
    {
        assertThat(ModelGlob.compile(glob).isLiteral()).isEqualTo(literal);
    }
}
