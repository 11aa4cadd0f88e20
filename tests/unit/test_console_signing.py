"""What the console trusts: Login Widget data as Telegram signs it, one-time links,
session cookies, CSRF tokens, and the sign-in attempt limit."""

from __future__ import annotations

import ipaddress

import pytest

from bot.web.console.limits import AttemptLimiter, client_address
from bot.web.signing import (
    LINK_SECONDS,
    SESSION_SECONDS,
    LinkSigner,
    SessionSigner,
    SignatureRefused,
    check_login_widget,
)
from tests.helpers.signing import widget_data as signed_widget_data

TOKEN = "123456:unit-test-token"
NOW = 1_800_000_000


def widget_data(token: str = TOKEN, auth_date: int = NOW, **extra: str) -> dict[str, str]:
    return signed_widget_data(token, auth_date, **extra)


def test_valid_widget_data_names_the_user() -> None:
    assert check_login_widget(TOKEN, widget_data(), NOW + 60) == 42
    assert check_login_widget(TOKEN, widget_data(photo_url="https://t.me/i/a.jpg"), NOW) == 42


@pytest.mark.parametrize("field", ["id", "first_name", "auth_date", "hash"])
def test_tampered_widget_data_is_refused(field: str) -> None:
    data = widget_data()
    data[field] = data[field][:-1] + ("1" if data[field][-1] != "1" else "2")
    with pytest.raises(SignatureRefused) as refused:
        check_login_widget(TOKEN, data, NOW)
    assert refused.value.reason == "signature"


def test_widget_data_signed_for_another_bot_is_refused() -> None:
    with pytest.raises(SignatureRefused):
        check_login_widget(TOKEN, widget_data(token="999:other"), NOW)


def test_widget_data_older_than_a_day_is_refused() -> None:
    assert check_login_widget(TOKEN, widget_data(), NOW + 86_400) == 42
    with pytest.raises(SignatureRefused) as refused:
        check_login_widget(TOKEN, widget_data(), NOW + 86_401)
    assert refused.value.reason == "expired"


def test_widget_data_without_its_hash_is_malformed() -> None:
    data = widget_data()
    del data["hash"]
    with pytest.raises(SignatureRefused) as refused:
        check_login_widget(TOKEN, data, NOW)
    assert refused.value.reason == "malformed"


@pytest.mark.parametrize("user_id", ["0", str(2**52), "9" * 20])
def test_widget_data_signed_for_an_id_no_user_has_is_malformed(user_id: str) -> None:
    with pytest.raises(SignatureRefused) as refused:
        check_login_widget(TOKEN, widget_data(id=user_id), NOW)
    assert refused.value.reason == "malformed"


def test_a_link_is_valid_for_five_minutes() -> None:
    signer = LinkSigner(TOKEN)
    token = signer.issue(42, NOW)
    claim = signer.check(token, NOW + LINK_SECONDS - 1)
    assert (claim.user_id, claim.expires_at) == (42, NOW + LINK_SECONDS)
    with pytest.raises(SignatureRefused) as refused:
        signer.check(token, NOW + LINK_SECONDS)
    assert refused.value.reason == "expired"


def test_each_link_has_its_own_nonce() -> None:
    signer = LinkSigner(TOKEN)
    first, second = (signer.check(signer.issue(42, NOW), NOW) for _ in range(2))
    assert first.nonce != second.nonce


@pytest.mark.parametrize("part", [0, 1, 2, 3])
def test_a_tampered_link_is_refused(part: int) -> None:
    signer = LinkSigner(TOKEN)
    parts = signer.issue(42, NOW).split(".")
    parts[part] = parts[part][:-1] + ("1" if parts[part][-1] != "1" else "2")
    with pytest.raises(SignatureRefused) as refused:
        signer.check(".".join(parts), NOW)
    assert refused.value.reason == "signature"


@pytest.mark.parametrize("token", ["", "abc", "1.2.3", "a.b.c.d", "42..n.sig", "42.x.n.sig"])
def test_garbage_is_not_a_link(token: str) -> None:
    with pytest.raises(SignatureRefused):
        LinkSigner(TOKEN).check(token, NOW)


def test_a_link_signed_by_another_bot_or_as_a_session_is_refused() -> None:
    with pytest.raises(SignatureRefused):
        LinkSigner(TOKEN).check(LinkSigner("999:other").issue(42, NOW), NOW)
    _, cookie = SessionSigner(TOKEN).issue(42, NOW)
    with pytest.raises(SignatureRefused):
        LinkSigner(TOKEN).check(cookie, NOW)


def test_a_session_cookie_names_its_user_until_it_expires() -> None:
    signer = SessionSigner(TOKEN)
    session, cookie = signer.issue(42, NOW)
    assert signer.check(cookie, NOW + SESSION_SECONDS - 1) == session
    with pytest.raises(SignatureRefused):
        signer.check(cookie, NOW + SESSION_SECONDS)


def test_a_tampered_session_cookie_is_refused() -> None:
    signer = SessionSigner(TOKEN)
    _, cookie = signer.issue(42, NOW)
    user, expires, session_id, signature = cookie.split(".")
    for forged in (
        f"7.{expires}.{session_id}.{signature}",  # another user
        f"{user}.{int(expires) + 10**6}.{session_id}.{signature}",  # a longer life
        f"{user}.{expires}.{session_id}.{'0' * 64}",
    ):
        with pytest.raises(SignatureRefused) as refused:
            signer.check(forged, NOW)
        assert refused.value.reason == "signature"


def test_a_csrf_token_belongs_to_one_session() -> None:
    signer = SessionSigner(TOKEN)
    mine, _ = signer.issue(42, NOW)
    other, _ = signer.issue(42, NOW)
    assert signer.csrf_ok(mine, signer.csrf_token(mine))
    assert not signer.csrf_ok(mine, signer.csrf_token(other))
    assert not signer.csrf_ok(mine, "")


def test_sign_in_attempts_are_limited_per_address_and_window() -> None:
    now = [0.0]
    limiter = AttemptLimiter(lambda: now[0], limit=10, window=60)
    assert all(limiter.allow("1.2.3.4") for _ in range(10))
    assert not limiter.allow("1.2.3.4")
    assert limiter.allow("5.6.7.8")  # another address has its own count
    now[0] = 59.0
    assert not limiter.allow("1.2.3.4")
    now[0] = 60.0  # the first ten attempts left the window
    assert limiter.allow("1.2.3.4")


PROXIES = (ipaddress.ip_network("10.0.0.0/8"), ipaddress.ip_network("::1/128"))


def test_the_client_is_the_peer_unless_the_peer_is_a_trusted_proxy() -> None:
    # A client that writes its own X-Forwarded-For directly changes nothing.
    assert client_address("203.0.113.9", ["1.1.1.1"], PROXIES) == "203.0.113.9"
    assert client_address("203.0.113.9", ["1.1.1.1"], ()) == "203.0.113.9"
    # Through the proxy: the address the proxy appended, not what the client put before it.
    assert client_address("10.0.0.2", ["1.1.1.1, 198.51.100.7"], PROXIES) == "198.51.100.7"
    # Two trusted hops (and the header split over two lines) are skipped from the right.
    assert client_address("::1", ["198.51.100.7", "10.1.1.1"], PROXIES) == "198.51.100.7"
    # From the proxy without the header (its own health probe): the proxy itself.
    assert client_address("10.0.0.2", [], PROXIES) == "10.0.0.2"
    assert client_address(None, [], PROXIES) == "unknown"


def test_entries_of_x_forwarded_for_that_are_not_addresses_are_skipped() -> None:
    # What a client wrote left of the proxy's entry never counts, address or not.
    assert client_address("10.0.0.2", ["garbage, 198.51.100.7"], PROXIES) == "198.51.100.7"
    assert client_address("10.0.0.2", ["198.51.100.7, <script>"], PROXIES) == "198.51.100.7"
    # Nothing but garbage: the client is the peer it is really seen at.
    for garbage in ("x1", "not an address", "1.2.3.4:80", "999.1.1.1", "", ","):
        assert client_address("10.0.0.2", [garbage], PROXIES) == "10.0.0.2"


def test_the_client_is_the_rightmost_untrusted_address_written_one_way() -> None:
    # Addresses come back in one spelling, so one client cannot pass for several.
    assert client_address("10.0.0.2", ["2001:DB8:0:0::1"], PROXIES) == "2001:db8::1"
    assert client_address("10.0.0.2", [" 198.51.100.7 "], PROXIES) == "198.51.100.7"
    # Only trusted hops: the farthest of them, the nearest the client.
    assert client_address("10.0.0.2", ["10.9.9.9, 10.0.0.3"], PROXIES) == "10.9.9.9"
