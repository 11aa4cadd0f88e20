"""The Mini App's ``initData``, checked as Telegram documents it ("Validating data
received via the Mini App", core.telegram.org/bots/webapps).

The client hands the page ``initData``: a query string of fields (``user`` as JSON,
``auth_date``, ``start_param``…) and ``hash``, the hex HMAC-SHA256 of the
data-check-string (every other field as ``key=value``, its value decoded, sorted by key,
joined by line feeds) keyed by the HMAC-SHA256 of the bot's token keyed by
``"WebAppData"``. A page signs in with it once (``bot.web.miniapp.sessions``), and only
while it is fresh: whoever copies a player's ``initData`` can use it for minutes, not for
the day it would otherwise stay valid.

Written by hand: python-telegram-bot has no check of it, and the libraries that do are
whole bot frameworks; the check is a few lines of the standard library's ``hmac``.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import parse_qsl

from bot.web.signing import USER_ID_LIMIT, SignatureRefused, whole_number

#: ``initData`` older than this is refused: the page signs in when it opens.
MAX_AGE_SECONDS = 10 * 60
#: How far ahead of the server's clock an ``auth_date`` may be (clock skew).
FUTURE_SKEW_SECONDS = 60
#: Longer ``initData`` is no client's (a user, a chat and a few fields).
MAX_LENGTH = 8192


@dataclass(frozen=True, slots=True)
class MiniAppUser:
    """Who opened the Mini App, as signed ``initData`` says."""

    user_id: int
    first_name: str
    username: str | None
    #: The client's language (IETF tag), if it says.
    language_code: str | None
    #: What the link that opened the app carried (``startapp``): the group, if any.
    start_param: str | None
    auth_date: int


def data_check_string(fields: Mapping[str, str]) -> str:
    """Every field but ``hash`` as ``key=value``, sorted by key, joined by line feeds."""
    return "\n".join(f"{key}={fields[key]}" for key in sorted(fields) if key != "hash")


def init_data_hash(bot_token: str, fields: Mapping[str, str]) -> str:
    """The ``hash`` Telegram signs ``fields`` with, for the bot of ``bot_token``."""
    secret = hmac.new(b"WebAppData", bot_token.encode(), hashlib.sha256).digest()
    return hmac.new(secret, data_check_string(fields).encode(), hashlib.sha256).hexdigest()


def _fields(raw: str) -> dict[str, str]:
    if not raw or len(raw) > MAX_LENGTH:
        raise SignatureRefused("malformed")
    try:
        pairs = parse_qsl(raw, keep_blank_values=True, strict_parsing=True)
    except ValueError:
        raise SignatureRefused("malformed") from None
    fields = dict(pairs)
    if len(fields) != len(pairs):  # a field twice: which one was signed?
        raise SignatureRefused("malformed")
    return fields


def check_init_data(bot_token: str, raw: str, now: int) -> MiniAppUser:
    """The user of ``initData`` signed for this bot and at most ``MAX_AGE_SECONDS`` old at
    ``now`` (seconds since the epoch); ``SignatureRefused`` (``malformed``,
    ``signature`` or ``expired``) otherwise."""
    fields = _fields(raw)
    received = fields.get("hash", "")
    if len(received) != 64 or "auth_date" not in fields or "user" not in fields:
        raise SignatureRefused("malformed")
    expected = init_data_hash(bot_token, fields)
    if not hmac.compare_digest(expected.encode(), received.encode()):
        raise SignatureRefused("signature")
    auth_date = whole_number(fields["auth_date"])
    if now - auth_date > MAX_AGE_SECONDS or auth_date - now > FUTURE_SKEW_SECONDS:
        raise SignatureRefused("expired")
    try:
        user = json.loads(fields["user"])
    except ValueError:
        raise SignatureRefused("malformed") from None
    if not isinstance(user, dict):
        raise SignatureRefused("malformed")
    user_id = user.get("id")
    first_name = user.get("first_name", "")
    username = user.get("username")
    language = user.get("language_code")
    if (
        type(user_id) is not int
        or not 0 < user_id < USER_ID_LIMIT
        or not isinstance(first_name, str)
        or not isinstance(username, str | None)
        or not isinstance(language, str | None)
    ):
        raise SignatureRefused("malformed")
    return MiniAppUser(
        user_id=user_id,
        first_name=first_name,
        username=username,
        language_code=language,
        start_param=fields.get("start_param"),
        auth_date=auth_date,
    )
