"""The Bot API endpoint, ``/bot<token>/<method>``: the token checked, the method looked up
(case-insensitively, as Telegram does), faults injected, the call logged and answered as
``{"ok": true, "result": …}`` or Telegram's error body with its HTTP status."""

from __future__ import annotations

import asyncio
import copy
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from aiohttp import web

from bot.fakegram.changes import Changes
from bot.fakegram.faults import FaultInjector
from bot.fakegram.params import ApiError, RequestParams, Upload, read_request_params

JsonDict = dict[str, Any]
Handler = Callable[[RequestParams], Awaitable[Any]]


class BotApiEndpoint:
    """Serves the Bot API methods ``handlers`` names (by their Bot API names) for ``token``,
    and keeps the log of every call."""

    def __init__(
        self,
        token: str,
        handlers: Mapping[str, Handler],
        changes: Changes,
        *,
        round_trip_seconds: float = 0.0,
    ) -> None:
        self._token = token
        #: Half before each call is performed, half before its answer goes: a bot far from
        #: Telegram's servers waits this long for every answer (a long poll's too).
        self._half_trip = round_trip_seconds / 2
        self._changes = changes
        self._methods = {name.lower(): (name, handler) for name, handler in handlers.items()}
        self._calls: list[JsonDict] = []
        self.faults = FaultInjector(
            {key: name for key, (name, _handler) in self._methods.items()}, changes.bump
        )

    @property
    def calls(self) -> list[JsonDict]:
        """Every Bot API request in completion order (see ``FakeTelegram.calls``)."""
        return copy.deepcopy(self._calls)

    def last_calls(self, count: int) -> list[JsonDict]:
        """The last ``count`` calls, for a message saying what the bot did last."""
        return self._calls[-count:]

    async def handle(self, request: web.Request) -> web.Response:
        """Answer one Bot API request."""
        method = request.match_info["method"]
        raw_params: JsonDict = {}
        if self._half_trip:
            await asyncio.sleep(self._half_trip)
        with self.faults.guard(request, method):
            try:
                if request.match_info["token"] != self._token:
                    raise ApiError(401, "Unauthorized")
                entry = self._methods.get(method.lower())
                if entry is None:
                    raise ApiError(404, "Not Found")
                method, handler = entry
                raw_params = await read_request_params(request)
                # A refusing fault raises before the call; a late answer is held after it.
                answer_delay = self.faults.draw(request, method)
                result = await handler(RequestParams(raw_params))
            except ApiError as error:
                self._record_call(method, raw_params, error)
                answer = web.json_response(error.to_json(), status=error.error_code)
            else:
                self._record_call(method, raw_params, None, result)
                await self.faults.hold(answer_delay)
                answer = web.json_response({"ok": True, "result": result})
        if self._half_trip:
            await asyncio.sleep(self._half_trip)
        return answer

    def _record_call(
        self, method: str, params: JsonDict, error: ApiError | None, result: object = None
    ) -> None:
        shown = {
            name: value.described() if isinstance(value, Upload) else value
            for name, value in params.items()
        }
        call: JsonDict = {"method": method, "params": shown, "time": time.time()}
        if error is None:
            call["ok"] = True
            if method == "getUpdates" and isinstance(result, list):
                call["update_ids"] = [update["update_id"] for update in result]
        else:
            call.update(ok=False, error_code=error.error_code, description=error.description)
        self._calls.append(call)
        self._changes.bump()
