"""Signatures the bot's web pages trust: the console's one-time sign-in links, session
tokens (the console's cookies, the Mini App's) and CSRF tokens, and Telegram's Login
Widget data. Standard library only (``hmac``, ``hashlib``, ``secrets``).

Every key is derived from the bot's token, one per purpose (HMAC of the token with the
purpose's name), so the console needs no secret of its own, a key leaked for one purpose
signs nothing for another, and a new token signs everyone out. Times are whole seconds
since the epoch, given by the caller.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from collections.abc import Mapping
from dataclasses import dataclass

#: How long a sign-in link from ``/console`` stays valid.
LINK_SECONDS = 5 * 60
#: How long a console session lasts after sign-in.
SESSION_SECONDS = 12 * 60 * 60
#: Telegram Login Widget data older than this is refused.
WIDGET_MAX_AGE_SECONDS = 24 * 60 * 60
#: How far ahead of the server's clock a widget's ``auth_date`` may be (clock skew).
WIDGET_FUTURE_SKEW_SECONDS = 60
#: Telegram's user ids fit in 52 bits; a larger one is no user (and no database integer).
USER_ID_LIMIT = 2**52


#: What a sign-in link's token and a session cookie look like (``user.expiry.nonce.hmac``),
#: for logs to blank them wherever they appear (``bot.telegram.runner.RedactSecrets``).
SIGNED_TOKEN = re.compile(r"\b\d+\.\d+\.[0-9a-f]{32}\.[0-9a-f]{64}\b")


class SignatureRefused(ValueError):
    """Signed data that is not accepted; ``reason`` says why: ``malformed``, ``signature``
    or ``expired``."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def derive_key(bot_token: str, purpose: str) -> bytes:
    """The key for one purpose: HMAC-SHA256 of ``purpose`` keyed by the bot's token."""
    return hmac.new(bot_token.encode(), purpose.encode(), hashlib.sha256).digest()


def _sign(key: bytes, payload: str) -> str:
    return hmac.new(key, payload.encode(), hashlib.sha256).hexdigest()


def _split_signed(key: bytes, token: str, fields: int) -> list[str]:
    """The fields of ``payload.signature`` once its signature checks out."""
    payload, dot, signature = token.rpartition(".")
    parts = payload.split(".")
    if not dot or len(parts) != fields or not all(parts):
        raise SignatureRefused("malformed")
    if not hmac.compare_digest(_sign(key, payload).encode(), signature.encode()):
        raise SignatureRefused("signature")
    return parts


def whole_number(text: str) -> int:
    """A field's decimal digits as a number; ``SignatureRefused`` for anything else."""
    if not text.isascii() or not text.isdigit() or len(text) > 20:
        raise SignatureRefused("malformed")
    return int(text)


@dataclass(frozen=True, slots=True)
class LinkClaim:
    """What a valid sign-in link says: who, until when, and its nonce (recorded once used)."""

    user_id: int
    expires_at: int
    nonce: str


class LinkSigner:
    """Issues and checks the one-time links ``/console`` sends: ``user.expiry.nonce.hmac``.
    That a link is used once is the database's to say (``ConsoleService.claim_link``)."""

    def __init__(self, bot_token: str) -> None:
        self._key = derive_key(bot_token, "niuniu-console-link")

    def issue(self, user_id: int, now: int) -> str:
        """A token for ``user_id`` valid for ``LINK_SECONDS`` from ``now``."""
        payload = f"{user_id}.{now + LINK_SECONDS}.{secrets.token_hex(16)}"
        return f"{payload}.{_sign(self._key, payload)}"

    def check(self, token: str, now: int) -> LinkClaim:
        """The claim of a link signed here and not expired; ``SignatureRefused`` otherwise."""
        user, expires, nonce = _split_signed(self._key, token, 3)
        claim = LinkClaim(whole_number(user), whole_number(expires), nonce)
        if now >= claim.expires_at:
            raise SignatureRefused("expired")
        return claim


@dataclass(frozen=True, slots=True)
class Session:
    """A signed-in browser: who, until when, and the session's id (the CSRF token's base)."""

    user_id: int
    expires_at: int
    session_id: str


class SessionSigner:
    """Session cookies (``user.expiry.id.hmac``) and their CSRF tokens. The signature
    says a cookie was issued here; whether its session is still signed in is the
    database's to say (``ConsoleService.session_live``)."""

    def __init__(
        self, bot_token: str, *, purpose: str = "niuniu-console", seconds: int = SESSION_SECONDS
    ) -> None:
        # A key of its own per page (``purpose``): a console cookie is no Mini App token.
        self._key = derive_key(bot_token, f"{purpose}-session")
        self._csrf_key = derive_key(bot_token, f"{purpose}-csrf")
        self.seconds = seconds

    def issue(self, user_id: int, now: int) -> tuple[Session, str]:
        """A new session for ``user_id`` and its cookie value."""
        session = Session(user_id, now + self.seconds, secrets.token_hex(16))
        payload = f"{session.user_id}.{session.expires_at}.{session.session_id}"
        return session, f"{payload}.{_sign(self._key, payload)}"

    def check(self, cookie: str, now: int) -> Session:
        """The session of a cookie signed here and not expired; ``SignatureRefused``
        otherwise."""
        user, expires, session_id = _split_signed(self._key, cookie, 3)
        session = Session(whole_number(user), whole_number(expires), session_id)
        if now >= session.expires_at:
            raise SignatureRefused("expired")
        return session

    def csrf_token(self, session: Session) -> str:
        """The token every form of this session posts back."""
        return _sign(self._csrf_key, session.session_id)

    def csrf_ok(self, session: Session, token: str) -> bool:
        """Whether a posted token is this session's."""
        return hmac.compare_digest(self.csrf_token(session).encode(), token.encode())


def check_login_widget(bot_token: str, fields: Mapping[str, str], now: int) -> int:
    """The Telegram user id of Login Widget data, checked as Telegram documents it
    (core.telegram.org/widgets/login, "Checking authorization"): the ``hash`` field must be
    the hex HMAC-SHA256 of the data-check-string (every other field as ``key=value``,
    sorted by key, joined by line feeds) keyed by the SHA-256 of the bot's token; and
    ``auth_date`` must be less than a day old, and ``id`` a user id (below
    ``USER_ID_LIMIT``). ``SignatureRefused`` otherwise."""
    received = fields.get("hash", "")
    if not received or "id" not in fields or "auth_date" not in fields:
        raise SignatureRefused("malformed")
    check_string = "\n".join(f"{key}={fields[key]}" for key in sorted(fields) if key != "hash")
    secret = hashlib.sha256(bot_token.encode()).digest()
    expected = hmac.new(secret, check_string.encode(), hashlib.sha256).hexdigest()
    if not hmac.compare_digest(expected.encode(), received.encode()):
        raise SignatureRefused("signature")
    auth_date = whole_number(fields["auth_date"])
    if now - auth_date > WIDGET_MAX_AGE_SECONDS or auth_date - now > WIDGET_FUTURE_SKEW_SECONDS:
        raise SignatureRefused("expired")
    user_id = whole_number(fields["id"])
    if not 0 < user_id < USER_ID_LIMIT:
        raise SignatureRefused("malformed")
    return user_id
