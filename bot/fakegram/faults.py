"""Fault injection for the fake Telegram: Telegram's bad moments, on purpose.

So that end-to-end tests can show the bot copes, a ``FaultMix`` says how often each fault
strikes a Bot API call, and ``FaultInjector`` draws them with a ``random.Random`` seeded
from the mix (the same seed and calls give the same faults) and counts what it injected,
by kind and method. The kinds:

- ``retry_after``: HTTP 429 with ``parameters.retry_after`` N, N drawn from
  ``retry_after_seconds``; the call is not performed.
- ``bad_gateway``: HTTP 502 with an HTML body, as the proxy in front of Telegram answers;
  the call is not performed.
- ``late_answer``: the call is performed (a message is in the chat) and its answer held
  ``late_answer_seconds``, by default longer than the bot's read timeout
  (``bot/telegram/http.py``), so the bot times out although Telegram has the message.
- ``reset``: the TCP connection is reset and nothing answered; the call is not performed.
- ``outage``: for the outage's seconds every Bot API request, ``getUpdates`` included, is
  reset, and so are those in flight when it starts; then everything works again.

The first four strike the methods of ``FaultMix.methods``, by default every method but
the start-up and configuration calls of ``UNFAULTED_METHODS``; an outage strikes all.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import random
import socket
import struct
import time
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, fields
from typing import Any

from aiohttp import web

from bot.fakegram.params import ApiError

JsonDict = dict[str, Any]

FAULT_KINDS = ("retry_after", "bad_gateway", "late_answer", "reset", "outage")
"""Every kind of fault, as ``FakeTelegram.faults_injected`` names them."""

UNFAULTED_METHODS = frozenset(
    {
        "getUpdates",
        "getMe",
        "setMyCommands",
        "deleteMyCommands",
        "getMyCommands",
        "setWebhook",
        "deleteWebhook",
        "getWebhookInfo",
        "logOut",
        "close",
    }
)
"""The methods a ``FaultMix`` without ``methods`` spares: start-up and configuration."""

# The bot's transport reads an answer for at most 5 s (bot/telegram/http.py), as
# python-telegram-bot's own does; a late answer must come after the bot gave up.
LATE_ANSWER_SECONDS = 6.0

_BAD_GATEWAY_HTML = (
    "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n"
    "<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx/1.18.0</center>\r\n"
    "</body>\r\n</html>\r\n"
)


@dataclass(frozen=True)
class FaultMix:
    """How often each fault strikes a call: rates from 0 to 1, together at most 1."""

    retry_after: float = 0
    retry_after_seconds: tuple[int, int] = (1, 4)
    bad_gateway: float = 0
    late_answer: float = 0
    late_answer_seconds: float = LATE_ANSWER_SECONDS
    reset: float = 0
    #: The methods struck, by their Bot API names; None for all but ``UNFAULTED_METHODS``.
    methods: frozenset[str] | None = None
    seed: int = 0

    def __post_init__(self) -> None:
        for name, rate in self.rates():
            if not _is_number(rate) or not 0 <= rate <= 1:
                raise ValueError(f"{name} must be a rate from 0 to 1, got {rate!r}")
        total = sum(rate for _name, rate in self.rates())
        if total > 1:
            raise ValueError(f"the rates add up to {total:g}, more than 1")
        seconds = self.retry_after_seconds
        if (
            not isinstance(seconds, tuple)
            or len(seconds) != 2
            or not all(isinstance(n, int) and not isinstance(n, bool) for n in seconds)
            or not 1 <= seconds[0] <= seconds[1]
        ):
            raise ValueError(
                f"retry_after_seconds must be two whole numbers 1 <= low <= high, got {seconds!r}"
            )
        late = self.late_answer_seconds
        if not _is_number(late) or not 0 < late < math.inf:
            raise ValueError(f"late_answer_seconds must be more than 0, got {late!r}")
        if self.methods is not None and (
            not isinstance(self.methods, frozenset)
            or not all(isinstance(method, str) for method in self.methods)
        ):
            raise ValueError(f"methods must be a set of method names, got {self.methods!r}")
        if not isinstance(self.seed, int) or isinstance(self.seed, bool):
            raise ValueError(f"seed must be an integer, got {self.seed!r}")

    def rates(self) -> tuple[tuple[str, float], ...]:
        """Each drawn kind with its rate, in the order of the draw."""
        return (
            ("retry_after", self.retry_after),
            ("bad_gateway", self.bad_gateway),
            ("late_answer", self.late_answer),
            ("reset", self.reset),
        )

    @classmethod
    def from_json(cls, body: object) -> FaultMix | None:
        """The mix a control request sends (its fields as JSON); ``{}`` or null is None.

        Raises:
            ValueError: for an unknown field or a value out of range.
        """
        if body is None or body == {}:
            return None
        if not isinstance(body, dict):
            raise ValueError("the faults must be a JSON object or null")
        known = [field.name for field in fields(cls)]
        unknown = sorted(set(body) - set(known))
        if unknown:
            raise ValueError(f"unknown field {unknown[0]!r}; fields are {', '.join(known)}")
        values = dict(body)
        if "retry_after_seconds" in values:
            low_high = values["retry_after_seconds"]
            if not isinstance(low_high, list):
                raise ValueError(f"retry_after_seconds must be [low, high], got {low_high!r}")
            values["retry_after_seconds"] = tuple(low_high)
        if values.get("methods") is not None:
            methods = values["methods"]
            if not isinstance(methods, list):
                raise ValueError(f"methods must be a list of method names, got {methods!r}")
            values["methods"] = frozenset(methods)
        return cls(**values)

    def to_json(self) -> JsonDict:
        """The mix as ``from_json`` reads it."""
        return {
            "retry_after": self.retry_after,
            "retry_after_seconds": list(self.retry_after_seconds),
            "bad_gateway": self.bad_gateway,
            "late_answer": self.late_answer,
            "late_answer_seconds": self.late_answer_seconds,
            "reset": self.reset,
            "methods": None if self.methods is None else sorted(self.methods),
            "seed": self.seed,
        }


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


class FaultInjector:
    """Draws and applies the faults of Bot API requests, and counts them.

    ``methods`` maps the fake's method names, lower-cased, to their Bot API spelling;
    ``on_change`` is called whenever a count changes, so that waiters look again.
    """

    def __init__(self, methods: Mapping[str, str], on_change: Callable[[], None]) -> None:
        self._method_names = dict(methods)
        self._on_change = on_change
        self._mix: FaultMix | None = None
        self._struck: frozenset[str] = frozenset()
        self._rng = random.Random(0)
        self._injected: dict[str, Counter[str]] = {kind: Counter() for kind in FAULT_KINDS}
        self._outage_ends = -math.inf
        self._in_flight: dict[asyncio.Transport, str] = {}
        self._held: set[asyncio.Future[None]] = set()

    @property
    def mix(self) -> FaultMix | None:
        """The mix in force, if any."""
        return self._mix

    def set_mix(self, mix: FaultMix | None) -> None:
        """Draw faults from ``mix`` from now on, its random sequence from the start.

        Raises:
            ValueError: if ``mix.methods`` names a method the fake does not serve.
        """
        if mix is None:
            struck = frozenset[str]()
        elif mix.methods is None:
            spared = {method.lower() for method in UNFAULTED_METHODS}
            struck = frozenset(self._method_names.keys() - spared)
        else:
            unknown = sorted(m for m in mix.methods if m.lower() not in self._method_names)
            if unknown:
                raise ValueError(f"methods: the fake serves no method {unknown[0]!r}")
            struck = frozenset(method.lower() for method in mix.methods)
        self._mix = mix
        self._struck = struck
        self._rng = random.Random(mix.seed if mix is not None else 0)

    def start_outage(self, seconds: float) -> None:
        """Reset every request for ``seconds`` from now, and those in flight now.

        Raises:
            ValueError: unless ``seconds`` is more than 0.
        """
        if not _is_number(seconds) or not 0 < seconds < math.inf:
            raise ValueError(f"seconds must be more than 0, got {seconds!r}")
        self._outage_ends = time.monotonic() + seconds
        for transport, method in list(self._in_flight.items()):
            self._count("outage", method)
            _reset_connection(transport)

    @property
    def in_outage(self) -> bool:
        """Whether an outage is on."""
        return time.monotonic() < self._outage_ends

    @property
    def injected(self) -> dict[str, dict[str, int]]:
        """How many faults were injected: kind -> method -> count (every kind present)."""
        return {kind: dict(counts) for kind, counts in self._injected.items()}

    @contextlib.contextmanager
    def guard(self, request: web.Request, method: str) -> Iterator[None]:
        """Handle a Bot API request within: reset at once during an outage, and cut off
        if one starts before it is answered."""
        transport = request.transport
        if transport is None:  # the client is gone already
            raise asyncio.CancelledError
        method = self._method_names.get(method.lower(), method)
        if self.in_outage:
            self._count("outage", method)
            _reset(request)
        self._in_flight[transport] = method
        try:
            yield
        finally:
            self._in_flight.pop(transport, None)

    def draw(self, request: web.Request, method: str) -> float:
        """Draw this call's fault; refuse the call here for a refusing one (raise), else
        return how long to hold its answer once performed (0 for at once)."""
        mix = self._mix
        if mix is None or method.lower() not in self._struck:
            return 0.0
        kind = _pick(self._rng.random(), mix.rates())
        if kind is None:
            return 0.0
        self._count(kind, method)
        if kind == "retry_after":
            seconds = self._rng.randint(*mix.retry_after_seconds)
            raise ApiError(
                429, f"Too Many Requests: retry after {seconds}", {"retry_after": seconds}
            )
        if kind == "bad_gateway":
            raise web.HTTPBadGateway(text=_BAD_GATEWAY_HTML, content_type="text/html")
        if kind == "reset":
            _reset(request)
        return mix.late_answer_seconds

    async def hold(self, seconds: float) -> None:
        """Hold an answer ``seconds`` (a late answer), or until ``release_held``."""
        if seconds <= 0:
            return
        released = asyncio.get_running_loop().create_future()
        self._held.add(released)
        try:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(released, seconds)
        finally:
            self._held.discard(released)

    def release_held(self) -> None:
        """Let held answers go now (the server is stopping)."""
        for released in self._held:
            if not released.done():
                released.set_result(None)

    def _count(self, kind: str, method: str) -> None:
        self._injected[kind][method] += 1
        self._on_change()


def _pick(roll: float, rates: tuple[tuple[str, float], ...]) -> str | None:
    """The kind whose share of [0, 1) ``roll`` falls in, the shares laid end to end."""
    for kind, rate in rates:
        if roll < rate:
            return kind
        roll -= rate
    return None


def _reset(request: web.Request) -> None:
    """Reset the request's connection and end its handler without an answer."""
    if request.transport is not None:
        _reset_connection(request.transport)
    # aiohttp sends nothing for a handler that ends cancelled.
    raise asyncio.CancelledError


def _reset_connection(transport: asyncio.Transport) -> None:
    sock = transport.get_extra_info("socket")
    if sock is not None:
        # Lingering 0 s makes the close a TCP RST, not a FIN: a reset, not a goodbye.
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    transport.abort()
