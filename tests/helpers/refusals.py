"""One refusal of each reason, with the English each gives: amounts as players type them,
and settings as admins type them. The unit tests check the texts; the shell's tests check
each reason is translated."""

from __future__ import annotations

from bot.rules.ruleset import RULESETS

#: One refusal of each reason: what is typed, the reason, its parameters, and the English
#: text ``str()`` gives (the CLI and the config file print it; it must not change).
AMOUNT_REFUSALS = [
    ("", "missing", {"typed": ""}, "an amount is missing"),
    (" -5 ", "negative", {"typed": "-5"}, "'-5' is negative; amounts must be positive"),
    (
        "1,000",
        "separators",
        {"typed": "1,000"},
        "'1,000': write amounts without separators, e.g. 1200.50",
    ),
    ("٣", "digits", {"typed": "٣"}, "'٣': write amounts with the digits 0-9"),
    ("12.345", "decimals", {"typed": "12.345"}, "'12.345' has more than two decimals"),
    ("abc", "not_amount", {"typed": "abc"}, "'abc' is not an amount; write e.g. 20 or 12.50"),
    (
        "99999999999",
        "too_large",
        {"typed": "99999999999", "maximum": "10000000.00"},
        "'99999999999' is too large; the most is 10000000.00",
    ),
]


RULESET_NAMES = ", ".join(sorted(RULESETS))
#: The languages as a refusal lists them, each by its own name.
LANGUAGE_CHOICES = (
    "en (English), zh (简体中文), zh-Hant (繁體中文), vi (Tiếng Việt), ms (Bahasa Melayu)"
)

#: One ``/set KEY VALUE`` refused for each reason (or more, where a reason has several
#: sources): the reason, its parameters, and the English text ``str()`` gives (the config
#: file's errors show it; it must not change).
SETTING_REFUSALS = [
    ("no_such", "1", "unknown_setting", {"typed": "no_such"}, "unknown setting 'no_such'"),
    (
        "bid_seconds",
        "0",
        "out_of_range",
        {"name": "bid_seconds", "minimum": "1", "maximum": "3600"},
        "bid_seconds must be between 1 and 3600",
    ),
    (
        "envelope_share",
        "10",
        "out_of_range",
        {"name": "envelope_mean_share", "minimum": "0.01", "maximum": "9.99"},
        "envelope_mean_share must be between 0.01 and 9.99",
    ),
    (
        "quick_bets",
        "0,5",
        "out_of_range",
        {"name": "quick_bets", "minimum": "0.01", "maximum": "10000000.00"},
        "quick_bets must be between 0.01 and 10000000.00",
    ),
    (
        "max_bet",
        "0.5",
        "max_below_min",
        {"minimum": "1.00", "maximum": "0.50"},
        "max_bet (0.50) cannot be below min_bet (1.00)",
    ),
    (
        "currency",
        "ABCDEFGHI",
        "currency_length",
        {"name": "currency", "maximum": "8"},
        "currency is a label of 1 to 8 printable characters",
    ),
    ("currency", "<b>", "currency_html", {"name": "currency"}, "currency cannot contain <, > or &"),
    (
        "lang",
        "fr",
        "not_one_of",
        {"name": "language", "choices": LANGUAGE_CHOICES},
        f"language is one of {LANGUAGE_CHOICES}",
    ),
    (
        "ruleset",
        "blackjack",
        "not_one_of",
        {"name": "ruleset", "choices": RULESET_NAMES},
        f"ruleset is one of {RULESET_NAMES}",
    ),
    (
        "dealer",
        "robot",
        "not_one_of",
        {"name": "dealer", "choices": "bid, house"},
        "dealer is one of bid, house",
    ),
    (
        "pictures",
        "maybe",
        "not_one_of",
        {"name": "pictures", "choices": "on, off"},
        "pictures is one of on, off",
    ),
    (
        "bid_seconds",
        "٣",
        "not_seconds",
        {"name": "bid_seconds", "typed": "٣"},
        "bid_seconds: '٣' is not a whole number of seconds",
    ),
    (
        "quick_bets",
        "1,2,3,4,5,6,7",
        "quick_bets_count",
        {"name": "quick_bets", "maximum": "6"},
        "quick_bets lists 1 to 6 amounts",
    ),
    (
        "quick_bets",
        "1,,2",
        "quick_bets_empty_item",
        {"name": "quick_bets", "typed": "1,,2"},
        "quick_bets: '1,,2' has an empty item; write e.g. 5,10,20",
    ),
    (
        "quick_bets",
        "5,10,5.00",
        "quick_bets_duplicate",
        {"name": "quick_bets", "amount": "5.00"},
        "quick_bets: 5.00 is listed twice",
    ),
    # A value that is not an amount or a rate: the parser's reason, with the setting's name.
    ("min_bid", "", "missing", {"name": "min_bid", "typed": ""}, "min_bid: an amount is missing"),
    (
        "dealer_fee",
        "-1",
        "negative",
        {"name": "dealer_fee", "typed": "-1"},
        "dealer_fee: '-1' is negative; amounts must be positive",
    ),
    (
        "min_bet",
        "1 000",
        "separators",
        {"name": "min_bet", "typed": "1 000"},
        "min_bet: '1 000': write amounts without separators, e.g. 1200.50",
    ),
    (
        "quick_bets",
        "5,٥",
        "digits",
        {"name": "quick_bets", "typed": "٥"},
        "quick_bets: '٥': write amounts with the digits 0-9",
    ),
    (
        "min_bet",
        "1.234",
        "decimals",
        {"name": "min_bet", "typed": "1.234"},
        "min_bet: '1.234' has more than two decimals",
    ),
    (
        "service_fee",
        "abc",
        "not_amount",
        {"name": "service_fee", "typed": "abc"},
        "service_fee: 'abc' is not an amount; write e.g. 20 or 12.50",
    ),
    (
        "min_bid",
        "99999999999",
        "too_large",
        {"name": "min_bid", "typed": "99999999999", "maximum": "10000000.00"},
        "min_bid: '99999999999' is too large; the most is 10000000.00",
    ),
    (
        "rebate_bps",
        "x",
        "not_rate",
        {"name": "rebate", "typed": "x"},
        "rebate: 'x' is not a rate; write e.g. 5% or 0.7% or 70bps",
    ),
    ("rake", "200%", "above_100", {"name": "rake", "typed": "200%"}, "rake: '200%' is above 100%"),
]
