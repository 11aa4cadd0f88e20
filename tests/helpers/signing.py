"""Telegram Login Widget data and Mini App ``initData`` signed as Telegram documents them,
computed here independently of ``bot.web`` so that the tests check it against the spec."""

from __future__ import annotations

import hashlib
import hmac
import json
from urllib.parse import urlencode


def widget_data(token: str, auth_date: int, **extra: str) -> dict[str, str]:
    """The widget's fields for Ann (id 42), or as ``extra`` overrides, signed for ``token``."""
    fields = {"id": "42", "first_name": "Ann", "username": "ann", "auth_date": str(auth_date)}
    fields.update(extra)
    check = "\n".join(f"{k}={fields[k]}" for k in sorted(fields))
    secret = hashlib.sha256(token.encode()).digest()
    fields["hash"] = hmac.new(secret, check.encode(), hashlib.sha256).hexdigest()
    return fields


def init_data(
    token: str,
    auth_date: int,
    *,
    user: dict[str, object] | None = None,
    **extra: str,
) -> str:
    """A Mini App's ``initData`` as a Telegram client hands it to the page: Ann (id 42),
    or ``user``, and the ``extra`` fields, signed for ``token`` (the secret is the
    HMAC-SHA256 of the token keyed by "WebAppData"), URL-encoded."""
    person = user if user is not None else {"id": 42, "first_name": "Ann", "username": "ann"}
    fields = {
        "query_id": "AAHdF6IQAAAAAN0XohDhrOrc",
        "user": json.dumps(person, separators=(",", ":"), ensure_ascii=False),
        "auth_date": str(auth_date),
        **extra,
    }
    check = "\n".join(f"{k}={fields[k]}" for k in sorted(fields))
    secret = hmac.new(b"WebAppData", token.encode(), hashlib.sha256).digest()
    fields["hash"] = hmac.new(secret, check.encode(), hashlib.sha256).hexdigest()
    return urlencode(fields)
