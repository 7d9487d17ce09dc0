package dev.sluice.plugin.guard;

import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What a rule looks for: a regular expression compiled once, an optional check of each candidate match (a checksum),
 * and an optional cheap pre-test that lets a text with no chance of a match skip the regex altogether.
 *
 * <p>The built-in PII detectors are {@link #BUILT_IN}: {@code email}, {@code phone}, {@code card}, {@code iban} and
 * {@code api_key}. Every quantifier in them is bounded, so a scan is linear in the text (no catastrophic backtracking
 * on hostile input). A deny list is a detector per regex ({@link #deny(String, String)}).
 *
 * <p>Thread-safe: immutable; {@link #matcher(CharSequence)} returns a new matcher each time.
 */
final class Detector
{
    /** The built-in detectors, by the rule name a config uses. */
    static final Map<String, Detector> BUILT_IN = Map.of(
        "email", new Detector("email",
            // RFC 5321 caps a local part at 64 and a label at 63 characters; the caps keep a scan linear, and the
            // lookbehind tries a run of local-part characters once, from its start, not from each of its characters.
            Pattern.compile("(?<![A-Za-z0-9._%+-])[A-Za-z0-9._%+-]{1,64}@(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\\.){1,8}"
                + "[A-Za-z]{2,24}(?![A-Za-z0-9-])"),
            Kind.EMAIL),
        "phone", new Detector("phone",
            // International (+CC ...) or national with separators: (555) 123-4567, 020 7946 0958, 01.23.45.67.89.
            // Bare digit runs are not phones (ids, timestamps); the digit count is checked below.
            Pattern.compile("(?<![\\w+.-])(?:\\+\\d{1,3}[ .-]?(?:\\(\\d{1,4}\\)[ .-]?)?\\d{1,4}(?:[ .-]?\\d{1,4}){1,5}"
                + "|(?:\\(\\d{2,4}\\)[ .-]?|\\d{2,4}[ .-])\\d{2,4}[ .-]\\d{2,4}(?:[ .-]\\d{2,4}){0,3})(?![\\w:/])(?![ .-]\\d)"),
            Kind.PHONE),
        "card", new Detector("card",
            // 13 to 19 digits, optionally grouped by single spaces or dashes, not inside a longer digit run.
            Pattern.compile("(?<![\\d-])\\d(?:[ -]?\\d){12,18}(?![ -]?\\d)"),
            Kind.CARD),
        "iban", new Detector("iban",
            // Country code, check digits, then the account in groups of four (optionally spaced): 15 to 34 characters.
            Pattern.compile("(?<![A-Za-z0-9])[A-Z]{2}\\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,3})?(?![A-Za-z0-9])"),
            Kind.IBAN),
        "api_key", new Detector("api_key",
            Pattern.compile("(?<![A-Za-z0-9_-])(?:sk-(?:ant-|proj-|svcacct-)?[A-Za-z0-9_-]{20,200}"
                + "|(?:AKIA|ASIA)[0-9A-Z]{16}|gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255}"
                + "|xox[bpoas]-[A-Za-z0-9-]{10,250}|AIza[0-9A-Za-z_-]{35})(?![A-Za-z0-9_-])"),
            Kind.API_KEY));

    /** How a candidate match is confirmed, and which pre-test applies. */
    enum Kind
    {
        /** Every regex match counts; no pre-test. */
        PLAIN,
        /** Needs an {@code @} in the text. */
        EMAIL,
        /** Needs a digit; 8 to 15 digits with a {@code +}, 9 to 15 without; not a dotted IPv4 address. */
        PHONE,
        /** Needs a digit; issuer digit 2 to 6 and the Luhn check. */
        CARD,
        /** Needs a digit; the ISO 13616 mod-97 check. */
        IBAN,
        /** Needs one of the key prefixes ({@code sk-}, {@code AKIA}, {@code ASIA}, {@code xox}, {@code AIza}) or a {@code _}. */
        API_KEY
    }

    private final String name;
    private final Pattern pattern;
    private final Kind kind;

    private Detector(String name, Pattern pattern, Kind kind)
    {
        this.name = name;
        this.pattern = pattern;
        this.kind = kind;
    }

    /**
     * A deny-list entry.
     *
     * @param name  the deny list's name, used as the rule name
     * @param regex a {@link Pattern} regular expression; flags such as {@code (?i)} go inline
     * @return the detector
     * @throws java.util.regex.PatternSyntaxException if {@code regex} does not compile
     */
    static Detector deny(String name, String regex)
    {
        return new Detector(name, Pattern.compile(regex), Kind.PLAIN);
    }

    /** @return the rule name this detector reports */
    String name()
    {
        return name;
    }

    /** @return the compiled regular expression */
    Pattern pattern()
    {
        return pattern;
    }

    /**
     * A cheap test, allocation-free, that rules out any match: an e-mail address needs an {@code @}, numbers need a
     * digit.
     *
     * @param text the text to scan
     * @return {@code false} if the text certainly holds no match; {@code true} if the regex must run
     */
    boolean mayMatch(CharSequence text)
    {
        switch (kind)
        {
            case EMAIL:
                return contains(text, '@');
            case PHONE:
            case CARD:
            case IBAN:
                return hasDigit(text);
            case API_KEY:
                return mayHoldKey(text);
            default:
                return true;
        }
    }

    /**
     * The regex engine tries every position of a text (Java's {@code Pattern} has no first-character skip for a
     * pattern that starts with a lookbehind), which for six alternatives costs more than the rest of the detectors
     * together on ordinary prose; {@code String.indexOf} is an intrinsic that skips ahead. {@code gh?_} and
     * {@code github_pat_} keys have a {@code _}, the others a fixed prefix.
     */
    private static boolean mayHoldKey(CharSequence text)
    {
        String s = text instanceof String string ? string : null;
        if (s == null)
            return true;
        return s.indexOf('_') >= 0 || s.contains("sk-") || s.contains("AKIA") || s.contains("ASIA") || s.contains("xox")
            || s.contains("AIza");
    }

    /**
     * @return whether only the positions {@link #canStartAt} accepts are tried ({@code phone}, {@code card},
     *         {@code iban}), instead of a {@link Matcher#find()} over the whole text
     */
    boolean anchored()
    {
        return kind == Kind.PHONE || kind == Kind.CARD || kind == Kind.IBAN;
    }

    /**
     * Whether a match may start at {@code i}: a digit that does not continue a number (or, for phones, a {@code +} or
     * {@code (}), or for an IBAN two capitals and two digits after no letter or digit. Java's regex engine would try
     * the pattern (its lookbehind first) at every position of the text; this test is a character or two, so prose
     * with a few numbers costs a few regex attempts instead of a thousand.
     */
    boolean canStartAt(CharSequence text, int i)
    {
        char c = text.charAt(i);
        char previous = i == 0 ? ' ' : text.charAt(i - 1);
        switch (kind)
        {
            case PHONE:
                return c == '+' || c == '(' || (isDigit(c) && !isDigit(previous) && !Character.isLetter(previous));
            case CARD:
                return isDigit(c) && !isDigit(previous) && previous != '-';
            case IBAN:
                return c >= 'A' && c <= 'Z' && i + 3 < text.length() && isUpper(text.charAt(i + 1))
                    && isDigit(text.charAt(i + 2)) && isDigit(text.charAt(i + 3)) && !isDigit(previous)
                    && !Character.isLetter(previous);
            default:
                return true;
        }
    }

    private static boolean isDigit(char c)
    {
        return c >= '0' && c <= '9';
    }

    private static boolean isUpper(char c)
    {
        return c >= 'A' && c <= 'Z';
    }

    /**
     * Confirms the match the matcher is on (its checksum, its digit count).
     *
     * @param text    the text the matcher scans
     * @param matcher a matcher of {@link #pattern()} positioned on a match
     * @return whether the match is one this detector reports
     */
    boolean confirm(CharSequence text, Matcher matcher)
    {
        int start = matcher.start();
        int end = matcher.end();
        switch (kind)
        {
            case PHONE:
                return isPhone(text, start, end);
            case CARD:
                return isCard(text, start, end);
            case IBAN:
                return isIban(text, start, end);
            default:
                return true;
        }
    }

    /**
     * @return whether the digits of {@code text[start, end)} (other characters skipped) pass the Luhn check, and
     *         there are 13 to 19 of them beginning with an issuer digit (2 to 6: Mastercard, Amex, Diners, JCB, Visa,
     *         Discover, UnionPay)
     */
    static boolean isCard(CharSequence text, int start, int end)
    {
        int digits = 0;
        int sum = 0;
        char first = 0;
        // From the right: every second digit doubled, 10 to 18 taken as their digit sum (d * 2 - 9).
        for (int i = end - 1; i >= start; i--)
        {
            char c = text.charAt(i);
            if (c < '0' || c > '9')
                continue;
            int d = c - '0';
            if ((digits & 1) == 1)
            {
                d *= 2;
                if (d > 9)
                    d -= 9;
            }
            sum += d;
            digits++;
            first = c;
        }
        return digits >= 13 && digits <= 19 && first >= '2' && first <= '6' && sum % 10 == 0;
    }

    /**
     * @return whether {@code text[start, end)}, spaces skipped, is 15 to 34 characters whose ISO 13616 check holds:
     *         the first four moved to the end, letters as 10 to 35, the number mod 97 is 1
     */
    static boolean isIban(CharSequence text, int start, int end)
    {
        int length = 0;
        for (int i = start; i < end; i++)
        {
            if (text.charAt(i) != ' ')
                length++;
        }
        if (length < 15 || length > 34)
            return false;
        int remainder = 0;
        // Two passes over the characters instead of a rotated copy: the BBAN first, then the country and check digits.
        for (int pass = 0; pass < 2; pass++)
        {
            int seen = 0;
            for (int i = start; i < end; i++)
            {
                char c = text.charAt(i);
                if (c == ' ')
                    continue;
                boolean head = seen++ < 4;
                if (head != (pass == 1))
                    continue;
                int v;
                if (c >= '0' && c <= '9')
                    v = c - '0';
                else if (c >= 'A' && c <= 'Z')
                    v = c - 'A' + 10;
                else if (c >= 'a' && c <= 'z')
                    v = c - 'a' + 10;
                else
                    return false;
                remainder = v < 10 ? (remainder * 10 + v) % 97 : (remainder * 100 + v) % 97;
            }
        }
        return remainder == 1;
    }

    /** @return whether {@code text[start, end)} has a phone's digit count and is not a dotted IPv4 address */
    static boolean isPhone(CharSequence text, int start, int end)
    {
        int digits = 0;
        int dots = 0;
        int others = 0;
        for (int i = start; i < end; i++)
        {
            char c = text.charAt(i);
            if (c >= '0' && c <= '9')
                digits++;
            else if (c == '.')
                dots++;
            else
                others++;
        }
        boolean plus = text.charAt(start) == '+';
        if (!plus && dots == 3 && others == 0 && digits <= 12)
            return false;
        return digits <= 15 && digits >= (plus ? 8 : 9);
    }

    private static boolean contains(CharSequence text, char wanted)
    {
        for (int i = 0, n = text.length(); i < n; i++)
        {
            if (text.charAt(i) == wanted)
                return true;
        }
        return false;
    }

    private static boolean hasDigit(CharSequence text)
    {
        for (int i = 0, n = text.length(); i < n; i++)
        {
            char c = text.charAt(i);
            if (c >= '0' && c <= '9')
                return true;
        }
        return false;
    }

    /** @return the matcher for {@code text}; one allocation, the regex engine's state */
    Matcher matcher(CharSequence text)
    {
        return pattern.matcher(text);
    }

    @Override
    public String toString()
    {
        return name;
    }
}
