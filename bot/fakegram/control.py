"""The ``/_fake/*`` HTTP endpoints: the in-process test API of ``FakeTelegram`` over HTTP.

They let a test drive a bot that runs in another process. Bodies and answers are JSON;
a mistake in a request (missing field, unknown message …) is a 400 ``{"error": reason}``.

Faults (``bot.fakegram.faults``): ``POST /_fake/faults`` with a ``FaultMix``'s fields
(``{}`` or null: no more faults), ``POST /_fake/outage`` with ``{"seconds": N}``, and
``GET /_fake/faults``: ``{"faults": the mix or null, "outage": bool, "injected": kind ->
method -> count}``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from aiohttp import web

from bot.fakegram.faults import FaultMix

if TYPE_CHECKING:
    from bot.fakegram.server import FakeTelegram

JsonDict = dict[str, Any]


def add_control_routes(app: web.Application, fake: FakeTelegram) -> None:
    """Register the control endpoints of ``fake`` on ``app``."""
    endpoints = _ControlEndpoints(fake)
    app.router.add_post("/_fake/message", endpoints.post_message)
    app.router.add_post("/_fake/callback", endpoints.press_button)
    app.router.add_post("/_fake/redeliver", endpoints.redeliver)
    app.router.add_post("/_fake/chat_member", endpoints.set_chat_member)
    app.router.add_post("/_fake/hold_sends", endpoints.hold_sends)
    app.router.add_post("/_fake/release_sends", endpoints.release_sends)
    app.router.add_get("/_fake/held_sends", endpoints.held_sends)
    app.router.add_get("/_fake/transcript", endpoints.transcript)
    app.router.add_get("/_fake/messages", endpoints.messages)
    app.router.add_get("/_fake/callback_answers", endpoints.callback_answers)
    app.router.add_get("/_fake/calls", endpoints.calls)
    app.router.add_get("/_fake/file", endpoints.file)
    app.router.add_get("/_fake/wait", endpoints.wait)
    app.router.add_post("/_fake/faults", endpoints.set_faults)
    app.router.add_get("/_fake/faults", endpoints.faults)
    app.router.add_post("/_fake/outage", endpoints.outage)


def _control_error(reason: str) -> web.HTTPBadRequest:
    return web.HTTPBadRequest(text=json.dumps({"error": reason}), content_type="application/json")


async def _apply_to_body(request: web.Request, action: Callable[[JsonDict], Any]) -> web.Response:
    """Run ``action`` on the JSON body and answer with its result as JSON."""
    try:
        body = await request.json()
        if not isinstance(body, dict):
            raise TypeError("the request body must be a JSON object")
        result = action(body)
    except KeyError as error:
        raise _control_error(f"missing field {error}") from None
    except (TypeError, ValueError) as error:
        raise _control_error(str(error)) from None
    return web.json_response(result)


def _query_chat_id(request: web.Request) -> int:
    try:
        return int(request.query["chat_id"])
    except (KeyError, ValueError):
        raise _control_error("chat_id query parameter (an integer) is required") from None


class _ControlEndpoints:
    def __init__(self, fake: FakeTelegram) -> None:
        self.fake = fake

    async def post_message(self, request: web.Request) -> web.Response:
        return await _apply_to_body(
            request,
            lambda body: self.fake.post_message(
                int(body["chat_id"]),
                body["user"],
                str(body["text"]),
                chat_type=str(body.get("chat_type", "supergroup")),
                chat_title=str(body.get("chat_title", "Test group")),
                reply_to_message_id=body.get("reply_to_message_id"),
            ),
        )

    async def press_button(self, request: web.Request) -> web.Response:
        return await _apply_to_body(
            request,
            lambda body: self.fake.press_button(
                int(body["chat_id"]), int(body["message_id"]), body["user"], str(body["data"])
            ),
        )

    async def redeliver(self, request: web.Request) -> web.Response:
        return await _apply_to_body(
            request, lambda body: self.fake.redeliver(int(body["update_id"]))
        )

    async def set_chat_member(self, request: web.Request) -> web.Response:
        return await _apply_to_body(
            request,
            lambda body: self.fake.set_chat_member(
                int(body["chat_id"]), int(body["user_id"]), str(body["status"])
            ),
        )

    async def hold_sends(self, request: web.Request) -> web.Response:
        return await _apply_to_body(
            request,
            lambda body: self.fake.hold_sends(
                str(body["pattern"]), delivered_first=bool(body.get("delivered_first", False))
            ),
        )

    async def release_sends(self, request: web.Request) -> web.Response:
        self.fake.release_sends()
        return web.json_response(None)

    async def held_sends(self, request: web.Request) -> web.Response:
        return web.json_response({"held": self.fake.held_sends})

    async def transcript(self, request: web.Request) -> web.Response:
        return web.json_response(self.fake.transcript(_query_chat_id(request)))

    async def messages(self, request: web.Request) -> web.Response:
        messages = self.fake.messages(_query_chat_id(request))
        return web.json_response({str(message_id): state for message_id, state in messages.items()})

    async def callback_answers(self, request: web.Request) -> web.Response:
        return web.json_response(self.fake.callback_answers)

    async def calls(self, request: web.Request) -> web.Response:
        return web.json_response(self.fake.calls)

    async def file(self, request: web.Request) -> web.Response:
        """The bytes of a photo or an animation the bot sent (``file_id`` in the query)."""
        try:
            data = self.fake.file_bytes(request.query.get("file_id", ""))
        except ValueError as error:
            raise _control_error(str(error)) from None
        return web.Response(body=data, content_type="application/octet-stream")

    async def wait(self, request: web.Request) -> web.Response:
        """Long poll until the state ``version`` changes, so other processes need not sleep."""
        try:
            version = int(request.query.get("version", "-1"))
            timeout = float(request.query.get("timeout", "0"))
        except ValueError:
            raise _control_error("version must be an integer, timeout a number") from None
        return web.json_response({"version": await self.fake.wait_for_change(version, timeout)})

    async def set_faults(self, request: web.Request) -> web.Response:
        """Set the fault mix (a ``FaultMix``'s fields; ``{}`` or null for none)."""
        try:
            self.fake.set_faults(FaultMix.from_json(await request.json()))
        except (TypeError, ValueError) as error:
            raise _control_error(str(error)) from None
        return web.json_response(None)

    async def faults(self, request: web.Request) -> web.Response:
        mix = self.fake.faults
        return web.json_response(
            {
                "faults": None if mix is None else mix.to_json(),
                "outage": self.fake.in_outage,
                "injected": self.fake.faults_injected,
            }
        )

    async def outage(self, request: web.Request) -> web.Response:
        return await _apply_to_body(request, lambda body: self.fake.outage(body["seconds"]))
