package dev.sluice.plugin.guard;

import dev.sluice.api.ErrorKind;
import dev.sluice.api.GatewayException;
import dev.sluice.support.config.ModelGlob;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The built-in detectors: what they find, what they must not find, and the checksums. */
class DetectorTest
{
    /** @return what the detector finds in {@code text}, through the scan the binding uses */
    private static List<String> find(String detector, String text)
    {
        Rule rule = new Rule(detector, Rule.Direction.REQUEST, new Detector[] {Detector.BUILT_IN.get(detector)},
            Rule.Action.REDACT);
        List<RuleSet.Span> spans = new RuleSet(List.of(rule), false).scan(text, 0);
        List<String> found = new ArrayList<>();
        if (spans != null)
        {
            for (RuleSet.Span span : spans)
                found.add(text.substring(span.start(), span.end()));
        }
        return found;
    }

    @ParameterizedTest
    @ValueSource(strings = {"4111111111111111", "4111 1111 1111 1111", "4111-1111-1111-1111", "5555555555554444",
        "378282246310005", "6011111111111117", "3530111333300000", "2223003122003222"})
    void findsCardNumbersThatPassLuhn(String card)
    {
        assertThat(find("card", "pay with " + card + " please")).containsExactly(card);
    }

    @ParameterizedTest
    @ValueSource(strings = {"4111111111111112", "4111 1111 1111 1113", "1234567812345678", "0000000000000000",
        "9111111111111111"})
    void ignoresCardShapedNumbersThatFailLuhnOrHaveNoIssuerDigit(String digits)
    {
        assertThat(find("card", "ref " + digits + ".")).isEmpty();
    }

    @Test
    void ignoresDigitsInsideLongerRuns()
    {
        assertThat(find("card", "id 94111111111111111123")).isEmpty();
        assertThat(find("card", "order 12345 shipped 2024-01-15, total 4111")).isEmpty();
    }

    @Test
    void randomSixteenDigitRunsRarelyLookLikeCards()
    {
        // Luhn lets one in ten random runs through and the issuer digit five in ten: about 5%, never most.
        Random random = new Random(42);
        int matched = 0;
        for (int i = 0; i < 1000; i++)
        {
            StringBuilder digits = new StringBuilder();
            for (int j = 0; j < 16; j++)
                digits.append((char) ('0' + random.nextInt(10)));
            if (!find("card", digits.toString()).isEmpty())
                matched++;
        }
        assertThat(matched).isBetween(20, 90);
    }

    @Test
    void luhnAndIssuerCheck()
    {
        assertThat(Detector.isCard("4012888888881881", 0, 16)).isTrue();
        assertThat(Detector.isCard("4012888888881882", 0, 16)).isFalse();
        assertThat(Detector.isCard("4012 8888 8888 1881", 0, 19)).isTrue();
        // 12 digits is too short for a card, even when the checksum holds.
        assertThat(Detector.isCard("401288888888", 0, 12)).isFalse();
    }

    @ParameterizedTest
    @ValueSource(strings = {"DE89370400440532013000", "DE89 3704 0044 0532 0130 00", "GB82WEST12345698765432",
        "GB82 WEST 1234 5698 7654 32", "FR1420041010050500013M02606", "NL91ABNA0417164300", "BE68539007547034"})
    void findsIbansThatPassMod97(String iban)
    {
        assertThat(find("iban", "to " + iban + " today")).containsExactly(iban);
    }

    @ParameterizedTest
    @ValueSource(strings = {"DE89370400440532013001", "GB82WEST12345698765433", "AB12 CDEF GHIJ KLMN"})
    void ignoresIbanShapedStringsThatFailMod97(String text)
    {
        assertThat(find("iban", "to " + text + " today")).isEmpty();
    }

    @Test
    void mod97Check()
    {
        assertThat(Detector.isIban("GB82WEST12345698765432", 0, 22)).isTrue();
        assertThat(Detector.isIban("GB82 WEST 1234 5698 7654 32", 0, 27)).isTrue();
        assertThat(Detector.isIban("GB83WEST12345698765432", 0, 22)).isFalse();
        assertThat(Detector.isIban("GB82WEST", 0, 8)).isFalse();
    }

    @Test
    void findsEmailAddresses()
    {
        assertThat(find("email", "write to john.doe+news@mail.example.co.uk or a@b.io."))
            .containsExactly("john.doe+news@mail.example.co.uk", "a@b.io");
        assertThat(find("email", "no address @ here, nor user@localhost, nor @handle")).isEmpty();
    }

    @ParameterizedTest
    @ValueSource(strings = {"+1 555 123 4567", "+44 20 7946 0958", "(555) 123-4567", "555-123-4567", "020 7946 0958",
        "01 23 45 67 89", "+33 1 23 45 67 89", "+491701234567"})
    void findsPhoneNumbers(String phone)
    {
        assertThat(find("phone", "call " + phone + " now")).containsExactly(phone);
    }

    @ParameterizedTest
    @ValueSource(strings = {"192.168.100.200", "2024-01-15", "2024-01-15 10:30", "1700000000", "v1.2.3", "12 apples",
        "4111 1111 1111 1111", "3.14159"})
    void ignoresNumbersThatAreNotPhones(String text)
    {
        assertThat(find("phone", "see " + text + " here")).isEmpty();
    }

    @ParameterizedTest
    @ValueSource(strings = {"sk-proj-abcdefghijklmnopqrstuvwxyz012345", "sk-ant-api03-abcdefghijklmnopqrstuvwx",
        "sk-abcdefghijklmnopqrstuvwxyz", "AKIAIOSFODNN7EXAMPLE", "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
        "github_pat_11ABCDEFG0123456789_abcdefghijklmnop", "xoxb-1234567890-abcdefghij",
        "AIzaSyA-abcdefghijklmnopqrstuvwxyz12345"})
    void findsApiKeyShapedStrings(String key)
    {
        assertThat(find("api_key", "key=" + key + " end")).containsExactly(key);
    }

    @Test
    void ignoresWordsThatOnlyLookLikeKeyPrefixes()
    {
        assertThat(find("api_key", "the task-list, sk-short, AKIA12, a desk-lamp and ghp_tooShort")).isEmpty();
    }

    @Test
    void scansHostileInputInLinearTime()
    {
        // Long runs that every pattern starts on and none completes: bounded quantifiers keep this fast; an unbounded
        // one would take minutes. Asserted as a result, not a duration.
        String text = "a".repeat(200_000) + "@" + "1-".repeat(100_000) + " sk-" + "x".repeat(100_000);
        for (String name : Detector.BUILT_IN.keySet())
            assertThat(find(name, text)).as(name).isNotNull();
    }

    @Test
    void redactsEveryMatchAndNamesTheRule()
    {
        RuleSet rules = new RuleSet(List.of(
            new Rule("email", Rule.Direction.REQUEST, new Detector[] {Detector.BUILT_IN.get("email")}, Rule.Action.REDACT),
            new Rule("card", Rule.Direction.REQUEST, new Detector[] {Detector.BUILT_IN.get("card")}, Rule.Action.REDACT)),
            false);
        assertThat(rules.apply("mail a@b.io and c@d.io, card 4111 1111 1111 1111."))
            .isEqualTo("mail [REDACTED:email] and [REDACTED:email], card [REDACTED:card].");
        assertThat(rules.apply("nothing to see")).isNull();
    }

    @Test
    void blockNamesTheRuleAndNotTheText()
    {
        Rule card = new Rule("card", Rule.Direction.REQUEST, new Detector[] {Detector.BUILT_IN.get("card")},
            Rule.Action.BLOCK);
        RuleSet rules = new RuleSet(List.of(card), false);
        assertThatThrownBy(() -> rules.apply("card 4111111111111111"))
            .isInstanceOfSatisfying(GatewayException.class, e ->
            {
                assertThat(e.kind()).isEqualTo(ErrorKind.GUARDRAIL_BLOCKED);
                assertThat(e.status()).isEqualTo(400);
                assertThat(e.getMessage()).contains("card").contains("request").doesNotContain("4111");
            });
        assertThat(card.hits()).isEqualTo(1);
    }

    @Test
    void reportModeCountsAndChangesNothing()
    {
        Rule email = new Rule("email", Rule.Direction.RESPONSE, new Detector[] {Detector.BUILT_IN.get("email")},
            Rule.Action.BLOCK);
        RuleSet rules = new RuleSet(List.of(email), true);
        assertThat(rules.apply("a@b.io, c@d.io")).isNull();
        assertThat(email.hits()).isEqualTo(2);
    }

    @Test
    void modelGlobs()
    {
        assertThat(ModelGlob.compile("gpt-*").matches("gpt-4o")).isTrue();
        assertThat(ModelGlob.compile("gpt-*").matches("claude")).isFalse();
        assertThat(ModelGlob.compile("*-mini").matches("gpt-4o-mini")).isTrue();
        assertThat(ModelGlob.compile("o?-*").matches("o3-pro")).isTrue();
        assertThat(ModelGlob.compile("exact").matches("exact")).isTrue();
    }
}
