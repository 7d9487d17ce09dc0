package dev.sluice.support.dialect;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;

class ContentTypesTest
{
    @ParameterizedTest
    @ValueSource(strings = {"application/json", "Application/JSON", " application/json ", "application/json;charset=utf-8",
        "application/json; charset=UTF-8", "application/json; charset=\"utf-8\"", "application/json;charset=utf8",
        "application/json; foo=bar", "application/vnd.api+json", "application/merge-patch+json; charset=utf-8", ""})
    void acceptsJsonInUtf8(String contentType)
    {
        assertThat(ContentTypes.json(contentType)).isNull();
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "text/plain|content-type: \"text/plain\" is not supported (expected: application/json)",
        "application/x-www-form-urlencoded|content-type: \"application/x-www-form-urlencoded\" is not supported (expected: application/json)",
        "multipart/form-data; boundary=x|content-type: \"multipart/form-data; boundary=x\" is not supported (expected: application/json)",
        "application/jsonp|content-type: \"application/jsonp\" is not supported (expected: application/json)",
        "text/json+xml|content-type: \"text/json+xml\" is not supported (expected: application/json)",
        "application/+json|content-type: \"application/+json\" is not supported (expected: application/json)",
        "application/json; charset=iso-8859-1|content-type: charset \"iso-8859-1\" is not supported (expected: utf-8, or no charset)",
        "application/json;charset=utf-16|content-type: charset \"utf-16\" is not supported (expected: utf-8, or no charset)",
    })
    void refusesOtherTypesAndCharsetsSayingWhatIsExpected(String contentType, String message)
    {
        assertThat(ContentTypes.json(contentType)).isEqualTo(message);
    }

    @Test
    void noHeaderIsJson()
    {
        assertThat(ContentTypes.json(null)).isNull();
    }
}
