"""Bot API request parameters, decoded the way Telegram accepts them.

Telegram takes parameters from the query string, a JSON body, a urlencoded form or a
multipart form. In the form encodings every value is a string and nested objects such as
``reply_markup`` are JSON text (python-telegram-bot posts forms like that), while a JSON
body carries native values; the accessors here accept both.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from aiohttp import web

JsonDict = dict[str, Any]


@dataclass(frozen=True, slots=True)
class Upload:
    """A file part of a multipart request."""

    filename: str
    content_type: str
    data: bytes

    def described(self) -> JsonDict:
        """What the fake's record of calls shows of it (JSON, without the bytes)."""
        return {"upload": self.filename, "content_type": self.content_type, "size": len(self.data)}


_JSON_CONTENT_TYPE = "application/json"
_FORM_CONTENT_TYPES = ("application/x-www-form-urlencoded", "multipart/form-data")


class ApiError(Exception):
    """A Bot API failure, answered as ``{"ok": false, "error_code": ..., ...}``."""

    def __init__(
        self, error_code: int, description: str, parameters: JsonDict | None = None
    ) -> None:
        super().__init__(description)
        self.error_code = error_code
        self.description = description
        self.parameters = parameters

    def to_json(self) -> JsonDict:
        """The response body Telegram sends for this error."""
        body: JsonDict = {
            "ok": False,
            "error_code": self.error_code,
            "description": self.description,
        }
        if self.parameters:
            body["parameters"] = self.parameters
        return body


def bad_request(message: str) -> ApiError:
    """A 400 error with Telegram's ``Bad Request:`` prefix."""
    return ApiError(400, f"Bad Request: {message}")


async def read_request_params(request: web.Request) -> JsonDict:
    """Merge query-string and body parameters of a Bot API request."""
    params: JsonDict = dict(request.query)
    if not request.body_exists:
        return params
    if request.content_type == _JSON_CONTENT_TYPE:
        try:
            body = await request.json()
        except ValueError as error:
            raise bad_request("can't parse JSON encoded request body") from error
        if not isinstance(body, dict):
            raise bad_request("JSON encoded request body must be an object")
        params.update(body)
    elif request.content_type in _FORM_CONTENT_TYPES:
        form = await request.post()
        # Text fields as strings; files (sendPhoto, sendAnimation) read whole, as uploads.
        for name, value in form.items():
            if isinstance(value, str):
                params[name] = value
            elif isinstance(value, web.FileField):
                params[name] = Upload(value.filename, value.content_type, value.file.read())
    return params


class RequestParams:
    """Typed access to one request's parameters; absent and empty values read as None."""

    def __init__(self, raw: JsonDict) -> None:
        self.raw = raw

    def _value(self, name: str) -> Any:
        value = self.raw.get(name)
        return None if value == "" else value

    def optional_int(self, name: str) -> int | None:
        """An integer parameter, given as a number or as its decimal text."""
        value = self._value(name)
        if value is None:
            return None
        if isinstance(value, bool):
            raise bad_request(f"invalid {name} specified")
        if isinstance(value, int):
            return value
        if isinstance(value, float) and value.is_integer():
            return int(value)
        try:
            return int(str(value))
        except ValueError:
            try:
                as_float = float(str(value))
            except ValueError:
                raise bad_request(f"invalid {name} specified") from None
            if not as_float.is_integer():
                raise bad_request(f"invalid {name} specified") from None
            return int(as_float)

    def required_int(self, name: str, missing: str | None = None) -> int:
        """An integer parameter that must be present; ``missing`` overrides the error text."""
        value = self.optional_int(name)
        if value is None:
            raise bad_request(missing or f"{name} is empty")
        return value

    def chat_id(self) -> int:
        """The ``chat_id``; ``@username`` chats are unknown to the fake."""
        value = self._value("chat_id")
        if value is None:
            raise bad_request("chat_id is empty")
        if isinstance(value, str) and value.startswith("@"):
            raise bad_request("chat not found")
        return self.required_int("chat_id")

    def optional_number(self, name: str) -> float | None:
        """A numeric parameter that may have a fraction (e.g. a timeout)."""
        value = self._value(name)
        if value is None:
            return None
        try:
            return float(value)
        except (TypeError, ValueError):
            raise bad_request(f"invalid {name} specified") from None

    def optional_str(self, name: str) -> str | None:
        """A string parameter."""
        value = self._value(name)
        return None if value is None else str(value)

    def flag(self, name: str) -> bool:
        """A boolean parameter; absent means False."""
        value = self._value(name)
        if isinstance(value, str):
            return value.lower() in ("true", "1")
        return bool(value)

    def optional_json(self, name: str, error: str | None = None) -> Any:
        """A JSON-serialized parameter, sent either as JSON text or as a native value."""
        value = self._value(name)
        if not isinstance(value, str):
            return value
        try:
            return json.loads(value)
        except ValueError:
            raise bad_request(error or f"can't parse {name} JSON object") from None
