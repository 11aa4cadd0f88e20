"""What the Mini App trusts: ``initData`` as Telegram signs it, fresh, for this bot, and
the session tokens a page signs in for."""

from __future__ import annotations

import hashlib
import hmac
from urllib.parse import parse_qsl, urlencode

import pytest

from bot.web.miniapp.init_data import (
    FUTURE_SKEW_SECONDS,
    MAX_AGE_SECONDS,
    MiniAppUser,
    check_init_data,
    init_data_hash,
)
from bot.web.miniapp.sessions import SESSION_SECONDS, MiniAppSessions
from bot.web.signing import SessionSigner, SignatureRefused
from tests.helpers.signing import init_data

TOKEN = "123456:unit-test-token"
NOW = 1_800_000_000


def _reason(raw: str, now: int = NOW, token: str = TOKEN) -> str:
    with pytest.raises(SignatureRefused) as refused:
        check_init_data(token, raw, now)
    return refused.value.reason


def test_signed_fresh_init_data_names_the_user_and_the_group_it_was_opened_for() -> None:
    user = {"id": 42, "first_name": "Ann 安", "username": "ann", "language_code": "zh-hans"}
    raw = init_data(TOKEN, NOW - 30, user=user, start_param="g-1001234")
    assert check_init_data(TOKEN, raw, NOW) == MiniAppUser(
        user_id=42,
        first_name="Ann 安",
        username="ann",
        language_code="zh-hans",
        start_param="g-1001234",
        auth_date=NOW - 30,
    )


def test_init_data_without_start_param_or_language_still_signs_in() -> None:
    signed_in = check_init_data(TOKEN, init_data(TOKEN, NOW), NOW)
    assert (signed_in.start_param, signed_in.language_code) == (None, None)


@pytest.mark.parametrize("field", ["user", "auth_date", "query_id", "start_param"])
def test_a_field_changed_after_signing_is_refused(field: str) -> None:
    fields = dict(parse_qsl(init_data(TOKEN, NOW, start_param="g-1")))
    fields[field] = fields[field].replace("1", "2") if "1" in fields[field] else fields[field] + "x"
    assert _reason(urlencode(fields)) == "signature"


def test_a_field_added_after_signing_is_refused() -> None:
    assert _reason(init_data(TOKEN, NOW) + "&start_param=g-1") == "signature"


def test_init_data_of_another_bot_is_refused() -> None:
    assert _reason(init_data("654321:another-bot", NOW)) == "signature"


def test_init_data_signed_as_login_widget_data_is_refused() -> None:
    # The Login Widget keys its hash by the token's SHA-256: not the Mini App's key.
    fields = dict(parse_qsl(init_data(TOKEN, NOW)))
    del fields["hash"]
    check = "\n".join(f"{k}={fields[k]}" for k in sorted(fields))
    secret = hashlib.sha256(TOKEN.encode()).digest()
    fields["hash"] = hmac.new(secret, check.encode(), hashlib.sha256).hexdigest()
    assert _reason(urlencode(fields)) == "signature"


def test_stale_init_data_is_refused_and_fresh_is_not() -> None:
    assert check_init_data(TOKEN, init_data(TOKEN, NOW - MAX_AGE_SECONDS), NOW).user_id == 42
    assert _reason(init_data(TOKEN, NOW - MAX_AGE_SECONDS - 1)) == "expired"
    assert _reason(init_data(TOKEN, NOW + FUTURE_SKEW_SECONDS + 1)) == "expired"


@pytest.mark.parametrize(
    "raw",
    [
        "",
        "not a query string",
        "hash=abc&auth_date=1&user=%7B%7D",
        "a=1&a=2",
        "x" * 10_000,
    ],
)
def test_malformed_init_data_is_refused(raw: str) -> None:
    assert _reason(raw) == "malformed"


def test_a_field_given_twice_is_refused_even_if_one_was_signed() -> None:
    assert _reason(init_data(TOKEN, NOW) + "&auth_date=1") == "malformed"


@pytest.mark.parametrize(
    "user",
    [
        {"id": 0, "first_name": "Zero"},
        {"id": -5, "first_name": "Negative"},
        {"id": 2**52, "first_name": "Too big"},
        {"id": "42", "first_name": "A string id"},
        {"id": True, "first_name": "A boolean id"},
        {"id": 42, "first_name": ["not", "text"]},
        {"first_name": "No id"},
    ],
)
def test_a_signed_user_that_is_no_user_is_refused(user: dict[str, object]) -> None:
    assert _reason(init_data(TOKEN, NOW, user=user)) == "malformed"


@pytest.mark.parametrize("auth_date", ["１８００", "-1", "1e9", ""])
def test_an_auth_date_that_is_no_whole_number_is_refused(auth_date: str) -> None:
    fields = dict(parse_qsl(init_data(TOKEN, NOW), keep_blank_values=True))
    del fields["hash"]
    fields["auth_date"] = auth_date
    # Signed correctly, so only the number itself can be refused.
    fields["hash"] = init_data_hash(TOKEN, fields)
    assert _reason(urlencode(fields)) == "malformed"


def test_a_page_signs_in_once_and_its_token_is_the_mini_apps_only() -> None:
    sessions = MiniAppSessions(TOKEN)
    signed_in = sessions.sign_in(init_data(TOKEN, NOW), NOW)
    assert signed_in.user.user_id == 42
    session, bot = sessions.check(signed_in.token, NOW + SESSION_SECONDS - 1)
    assert (session.user_id, bot, signed_in.bot) == (42, 0, 0)
    with pytest.raises(SignatureRefused) as expired:
        sessions.check(signed_in.token, NOW + SESSION_SECONDS)
    assert expired.value.reason == "expired"
    # A console cookie of the same user is no Mini App token, nor the reverse.
    _, cookie = SessionSigner(TOKEN).issue(42, NOW)
    with pytest.raises(SignatureRefused):
        sessions.check(cookie, NOW)
    with pytest.raises(SignatureRefused):
        SessionSigner(TOKEN).check(signed_in.token, NOW)


def test_a_page_of_any_bot_signs_in_and_its_token_names_that_bot() -> None:
    second = "654321:SECOND-bot-token"
    sessions = MiniAppSessions(TOKEN, second)
    signed_in = sessions.sign_in(init_data(second, NOW), NOW)
    assert (signed_in.user.user_id, signed_in.bot) == (42, 1)
    assert sessions.check(signed_in.token, NOW)[1] == 1
    assert sessions.check(sessions.sign_in(init_data(TOKEN, NOW), NOW).token, NOW)[1] == 0
    with pytest.raises(SignatureRefused) as expired:
        sessions.check(signed_in.token, NOW + SESSION_SECONDS)
    assert expired.value.reason == "expired"
    # The second bot's token is no key for the first's pages, nor another bot's for any.
    alone = MiniAppSessions(TOKEN)
    for refused in (
        lambda: alone.check(signed_in.token, NOW),
        lambda: sessions.sign_in(init_data("777:NOBODY", NOW), NOW),
    ):
        with pytest.raises(SignatureRefused) as caught:
            refused()
        assert caught.value.reason == "signature"


def test_stale_init_data_signs_no_page_in() -> None:
    with pytest.raises(SignatureRefused):
        MiniAppSessions(TOKEN).sign_in(init_data(TOKEN, NOW - MAX_AGE_SECONDS - 1), NOW)
