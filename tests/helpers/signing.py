"""Telegram Login Widget data signed as Telegram documents it, computed here independently
of ``bot.web.console.signing`` so that the tests check the console against the spec."""

from __future__ import annotations

import hashlib
import hmac


def widget_data(token: str, auth_date: int, **extra: str) -> dict[str, str]:
    """The widget's fields for Ann (id 42), or as ``extra`` overrides, signed for ``token``."""
    fields = {"id": "42", "first_name": "Ann", "username": "ann", "auth_date": str(auth_date)}
    fields.update(extra)
    check = "\n".join(f"{k}={fields[k]}" for k in sorted(fields))
    secret = hashlib.sha256(token.encode()).digest()
    fields["hash"] = hmac.new(secret, check.encode(), hashlib.sha256).hexdigest()
    return fields
