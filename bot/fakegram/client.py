"""HTTP client for the ``/_fake/*`` control endpoints of a ``FakeTelegram`` server.

For end-to-end tests where the bot, the fake and the test run in different processes.
Mistakes a test makes (unknown message, bad chat id …) raise ``ValueError``, as the
in-process API does.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

import aiohttp

from bot.fakegram.faults import FaultMix

JsonDict = dict[str, Any]
_T = TypeVar("_T")


class FakeTelegramClient:
    """Drives a running fake Telegram server from outside its process.

    ``base`` is the server root, e.g. ``http://127.0.0.1:8081`` (not the ``/bot`` URL).
    Use as ``async with FakeTelegramClient(base) as fake:`` or call ``close`` when done.
    """

    def __init__(
        self, base: str, *, trace_configs: list[aiohttp.TraceConfig] | None = None
    ) -> None:
        self.base = base.rstrip("/")
        #: aiohttp's tracing of each request (a bench times when a press left it).
        self.trace_configs = trace_configs
        self._session: aiohttp.ClientSession | None = None

    async def __aenter__(self) -> FakeTelegramClient:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    async def close(self) -> None:
        """Close the underlying HTTP session."""
        if self._session is not None:
            await self._session.close()
            self._session = None

    async def post_message(
        self,
        chat_id: int,
        user: Mapping[str, Any],
        text: str,
        *,
        chat_type: str = "supergroup",
        chat_title: str = "Test group",
        reply_to_message_id: int | None = None,
    ) -> JsonDict:
        """Have ``user`` write ``text`` in a chat; returns the queued update."""
        body = {
            "chat_id": chat_id,
            "user": dict(user),
            "text": text,
            "chat_type": chat_type,
            "chat_title": chat_title,
            "reply_to_message_id": reply_to_message_id,
        }
        update: JsonDict = await self._request("POST", "/_fake/message", json=body)
        return update

    async def press_button(
        self, chat_id: int, message_id: int, user: Mapping[str, Any], data: str
    ) -> JsonDict:
        """Have ``user`` press an inline button of a bot message; returns the update."""
        body = {"chat_id": chat_id, "message_id": message_id, "user": dict(user), "data": data}
        update: JsonDict = await self._request("POST", "/_fake/callback", json=body)
        return update

    async def redeliver(self, update_id: int) -> JsonDict:
        """Queue an already sent update again, with the same ``update_id``."""
        update: JsonDict = await self._request(
            "POST", "/_fake/redeliver", json={"update_id": update_id}
        )
        return update

    async def set_chat_member(self, chat_id: int, user_id: int, status: str) -> None:
        """Set what ``getChatMember`` reports for the user in the chat."""
        body = {"chat_id": chat_id, "user_id": user_id, "status": status}
        await self._request("POST", "/_fake/chat_member", json=body)

    async def hold_sends(self, pattern: str, *, delivered_first: bool = False) -> None:
        """Hold the bot's ``sendMessage`` requests whose text matches ``pattern`` until
        ``release_sends`` (see ``FakeTelegram.hold_sends``)."""
        body = {"pattern": pattern, "delivered_first": delivered_first}
        await self._request("POST", "/_fake/hold_sends", json=body)

    async def release_sends(self) -> None:
        """Let held ``sendMessage`` requests go on, and hold no more."""
        await self._request("POST", "/_fake/release_sends")

    async def held_sends(self) -> int:
        """How many ``sendMessage`` requests are held right now."""
        answer: JsonDict = await self._request("GET", "/_fake/held_sends")
        held: int = answer["held"]
        return held

    async def transcript(self, chat_id: int) -> list[JsonDict]:
        """Every bot action in the chat, in order (see ``FakeTelegram.transcript``)."""
        entries: list[JsonDict] = await self._request(
            "GET", "/_fake/transcript", params={"chat_id": chat_id}
        )
        return entries

    async def messages(self, chat_id: int) -> dict[int, JsonDict]:
        """The bot's current messages in the chat, by message id."""
        by_key: dict[str, JsonDict] = await self._request(
            "GET", "/_fake/messages", params={"chat_id": chat_id}
        )
        return {int(message_id): state for message_id, state in by_key.items()}

    async def callback_answers(self) -> list[JsonDict]:
        """Every successful ``answerCallbackQuery``."""
        answers: list[JsonDict] = await self._request("GET", "/_fake/callback_answers")
        return answers

    async def calls(self) -> list[JsonDict]:
        """Every Bot API request the server answered."""
        calls: list[JsonDict] = await self._request("GET", "/_fake/calls")
        return calls

    async def set_faults(self, mix: FaultMix | None) -> None:
        """Inject faults as ``mix`` says from now on, None for no more (see
        ``FakeTelegram.set_faults``)."""
        await self._request("POST", "/_fake/faults", json={} if mix is None else mix.to_json())

    async def outage(self, seconds: float) -> None:
        """Reset every Bot API request for ``seconds`` from now (``FakeTelegram.outage``)."""
        await self._request("POST", "/_fake/outage", json={"seconds": seconds})

    async def in_outage(self) -> bool:
        """Whether an outage is on."""
        answer: JsonDict = await self._request("GET", "/_fake/faults")
        on: bool = answer["outage"]
        return on

    async def faults_injected(self) -> dict[str, dict[str, int]]:
        """How many faults were injected: kind -> method -> count."""
        answer: JsonDict = await self._request("GET", "/_fake/faults")
        injected: dict[str, dict[str, int]] = answer["injected"]
        return injected

    async def file_bytes(self, file_id: str) -> bytes:
        """The bytes of a photo or an animation the bot sent (a transcript entry's
        ``media["file_id"]``)."""
        if self._session is None:
            self._session = aiohttp.ClientSession()
        url = self.base + "/_fake/file"
        async with self._session.get(url, params={"file_id": file_id}) as response:
            if response.status == 400:
                body = await response.json(content_type=None)
                raise ValueError(body.get("error", body) if isinstance(body, dict) else body)
            response.raise_for_status()
            return await response.read()

    async def wait_for_transcript(
        self,
        chat_id: int,
        predicate: Callable[[list[JsonDict]], _T],
        timeout: float = 5.0,
    ) -> _T:
        """Return ``predicate(transcript)``'s first truthy value, re-checked on every change.

        Raises:
            TimeoutError: if it stays falsy for ``timeout`` seconds.
        """
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        # The version is read before the transcript, so a change in between is not missed.
        version = await self._wait_for_change(-1, 0.0)
        while True:
            transcript = await self.transcript(chat_id)
            result = predicate(transcript)
            if result:
                return result
            remaining = deadline - loop.time()
            if remaining <= 0:
                raise TimeoutError(
                    f"transcript of chat {chat_id} did not match within {timeout} s: {transcript}"
                )
            version = await self._wait_for_change(version, remaining)

    async def _wait_for_change(self, version: int, timeout: float) -> int:
        """Long-poll the server until its state version differs from ``version``."""
        answer: JsonDict = await self._request(
            "GET", "/_fake/wait", params={"version": version, "timeout": timeout}
        )
        new_version: int = answer["version"]
        return new_version

    async def _request(self, method: str, path: str, **kwargs: Any) -> Any:
        if self._session is None:
            self._session = aiohttp.ClientSession(trace_configs=self.trace_configs)
        async with self._session.request(method, self.base + path, **kwargs) as response:
            if response.status == 400:
                body = await response.json(content_type=None)
                raise ValueError(body.get("error", body) if isinstance(body, dict) else body)
            response.raise_for_status()
            return await response.json()
