"""The Bot API's transport: python-telegram-bot's requests sent on kept-alive connections
(``bot.telegram.kept_alive``), uploads and calls through a proxy with aiohttp.

python-telegram-bot ships one transport, on httpx, which costs the event loop several
times the CPU a call through aiohttp does, and aiohttp's client in turn costs it about
twice what the call's own bytes do (``bench/bench_http.py`` measures each). A bot under
load makes dozens of calls a second (toasts, boards, answers, ``getUpdates``), so those
calls were much of its CPU. Written by hand because no maintained package provides this
transport; it does what ``HTTPXRequest`` does, with the same parameters (form-encoded, or
multipart with files) and the same errors (``TimedOut``, ``NetworkError``).

An edit's answer is the edited message, which the bot never reads: a successful one is
passed on as Telegram answers an edit of an inline message, ``true``, so that neither its
JSON (a whole board) nor a message object is built of it.

What Telegram sends back of the bot's own messages (a message sent or edited, the message
of a pressed button) is cut to what the bot reads of it before python-telegram-bot builds
objects of it: their text, entities and keyboard, which the bot wrote itself, were most
of what parsing an answer or a press cost (``bench/bench_http.py``).

A server error whose answer is not JSON (a proxy's "502 Bad Gateway" page) is a
``NetworkError`` here, worded as python-telegram-bot words a 5xx that Telegram answered
in JSON: left to python-telegram-bot's parser, it logged the whole page at ERROR, with a
traceback, at every retry.
"""

from __future__ import annotations

import json
from http import HTTPStatus
from typing import Any, NamedTuple, TypeGuard

import aiohttp
from aiohttp.helpers import get_env_proxy_for_url
from telegram.error import NetworkError, TimedOut
from telegram.request import BaseRequest, RequestData
from yarl import URL

from bot.telegram.kept_alive import KeptAliveConnections, Origin, Timeouts
from bot.telegram.poll_window import PollWindow
from bot.telegram.reachability import Reachability

_Proxy = tuple[URL | None, aiohttp.BasicAuth | None]


class _Target(NamedTuple):
    """What a call to one URL needs besides its body: the server, the request's head but
    its length, and the proxy from the environment."""

    origin: Origin
    head: str
    proxy: _Proxy


#: Connections to the Bot API kept at once (python-telegram-bot's default for its own).
CONNECTIONS = 256
#: What the bot reads of a message of its own that Telegram sends back: which message it
#: is, where, and when (the id of a message sent; the chat and id of a pressed button's).
OWN_MESSAGE_FIELDS = frozenset(
    {"message_id", "message_thread_id", "is_topic_message", "chat", "from", "date"}
)

#: The answer an edit's success is passed on as (see the module's docstring).
EDITED = b'{"ok":true,"result":true}'
_EDITS = "/editMessage"

#: The URLs whose targets are kept (a bot's methods; past that, they start over).
_MOST_TARGETS = 256

#: The headers of a request whose parameters go as a plain form (no file).
_FORM = {"Content-Type": "application/x-www-form-urlencoded"}


class BotApiRequest(BaseRequest):
    """python-telegram-bot's ``BaseRequest``: a plain call on ``KeptAliveConnections``,
    an upload or a call through a proxy on an ``aiohttp.ClientSession``.

    Timeouts as ``HTTPXRequest`` takes them, each ``None`` for no limit:
    ``connect_timeout`` to connect; ``pool_timeout`` more to wait for a free connection
    first; ``read_timeout`` for the answer (on a kept-alive connection, from the request
    handed over to the answer's last byte: a form is small enough for the socket to take
    at once; with aiohttp, each read of it). aiohttp bounds connecting and waiting for a
    connection together and has no timeout for writing the request, so an upload is
    bounded by the sum of the four, with ``media_write_timeout`` as the write's: an
    upload the server stops taking fails as ``TimedOut``, as with httpx.
    A proxy comes from the environment (``HTTPS_PROXY``, ``NO_PROXY``), as httpx takes
    it, looked up once per URL: aiohttp's own lookup (``trust_env``) reads the
    environment at every call, which costs more than the rest of the call.
    """

    def __init__(
        self,
        *,
        connection_pool_size: int = CONNECTIONS,
        read_timeout: float | None = 5.0,
        write_timeout: float | None = 5.0,
        connect_timeout: float | None = 5.0,
        pool_timeout: float | None = 1.0,
        media_write_timeout: float | None = 20.0,
        reachability: Reachability | None = None,
    ) -> None:
        self._connections = connection_pool_size
        #: Told of each answer and each failure on the way.
        self._reachability = reachability if reachability is not None else Reachability()
        self._read_timeout = read_timeout
        self._write_timeout = write_timeout
        self._connect_timeout = connect_timeout
        self._pool_timeout = pool_timeout
        self._media_write_timeout = media_write_timeout
        self._session: aiohttp.ClientSession | None = None
        self._kept_alive = KeptAliveConnections(connection_pool_size)
        #: Each URL's target (a bot calls a few dozen methods), so that a call parses no
        #: URL and reads no environment.
        self._targets: dict[tuple[str, str, bool], _Target] = {}

    @property
    def read_timeout(self) -> float | None:
        return self._read_timeout

    async def initialize(self) -> None:
        if self._session is None or self._session.closed:
            self._session = aiohttp.ClientSession(
                connector=aiohttp.TCPConnector(limit=self._connections),
                headers={"User-Agent": self.USER_AGENT},
            )

    async def shutdown(self) -> None:
        if self._session is not None and not self._session.closed:
            await self._session.close()
        self._session = None
        self._kept_alive.close()

    async def do_request(
        self,
        url: str,
        method: str,
        request_data: RequestData | None = None,
        read_timeout: float | object | None = BaseRequest.DEFAULT_NONE,
        write_timeout: float | object | None = BaseRequest.DEFAULT_NONE,
        connect_timeout: float | object | None = BaseRequest.DEFAULT_NONE,
        pool_timeout: float | object | None = BaseRequest.DEFAULT_NONE,
    ) -> tuple[int, bytes]:
        if self._session is None or self._session.closed:
            raise RuntimeError("This BotApiRequest is not initialized!")
        files = request_data is not None and request_data.contains_files
        pool = _given(pool_timeout, self._pool_timeout)
        connect = _given(connect_timeout, self._connect_timeout)
        read = _given(read_timeout, self._read_timeout)
        write = _given(write_timeout, self._media_write_timeout if files else self._write_timeout)
        body: aiohttp.FormData | bytes | None = None
        headers: dict[str, str] | None = None
        if request_data is not None and files:
            body = _multipart(request_data)
        elif request_data is not None:
            # Encoded here, not by aiohttp's FormData: its machinery for a plain form cost
            # the event loop more than the encoding itself (bench/bench_http.py).
            body, headers = request_data.url_encoded_parameters().encode(), _FORM
        target = self._target(method, url, headers)
        proxy, proxy_auth = target.proxy
        try:
            if files or proxy is not None:
                steps = (pool, connect, write, read)
                timeout = aiohttp.ClientTimeout(
                    total=None if None in steps else sum(step or 0.0 for step in steps),
                    connect=None if pool is None or connect is None else pool + connect,
                    sock_connect=connect,
                    sock_read=read,
                )
                async with self._session.request(
                    method,
                    url,
                    data=body,
                    headers=headers,
                    timeout=timeout,
                    proxy=proxy,
                    proxy_auth=proxy_auth,
                ) as response:
                    status, payload = response.status, await response.read()
            else:
                assert not isinstance(body, aiohttp.FormData)
                status, payload = await self._kept_alive.call(
                    target.origin,
                    target.head,
                    body or b"",
                    Timeouts(pool=pool, connect=connect, answer=read),
                )
        except TimeoutError as error:
            self._reachability.failed()
            raise TimedOut from error
        except aiohttp.ClientError as error:
            self._reachability.failed()
            raise NetworkError(f"aiohttp.{error.__class__.__name__}: {error}") from error
        except OSError as error:  # a kept-alive connection's (ConnectionBroken among them)
            self._reachability.failed()
            raise NetworkError(f"{error.__class__.__name__}: {error}") from error
        if status >= HTTPStatus.INTERNAL_SERVER_ERROR and not _is_json(payload):
            self._reachability.failed()
            raise NetworkError(_status_text(status))
        self._reachability.answered()
        if status == HTTPStatus.OK and _EDITS in url:
            return status, EDITED
        return status, payload

    @staticmethod
    def parse_json_payload(payload: bytes) -> dict[str, Any]:
        """Telegram's answer, the bot's own messages in it cut to ``OWN_MESSAGE_FIELDS``."""
        data = BaseRequest.parse_json_payload(payload)
        result = data.get("result")
        if isinstance(result, list):
            for update in result:
                lean_update(update)
        elif _is_message(result):
            _cut(result)
        return data

    def _target(self, method: str, url: str, headers: dict[str, str] | None) -> _Target:
        """The target of a request to ``url`` (its proxy looked up as httpx looks it up)."""
        key = (method, url, headers is not None)
        found = self._targets.get(key)
        if found is None:
            target = URL(url)
            assert target.host is not None and target.port is not None, url
            default_port = {"http": 80, "https": 443}.get(target.scheme)
            host = f"[{target.host}]" if ":" in target.host else target.host  # IPv6
            if target.port != default_port:
                host = f"{host}:{target.port}"
            lines = [
                f"{method} {target.raw_path_qs} HTTP/1.1",
                f"Host: {host}",
                f"User-Agent: {self.USER_AGENT}",
                *(f"{name}: {value}" for name, value in (headers or {}).items()),
            ]
            try:
                proxy: _Proxy = get_env_proxy_for_url(target)
            except LookupError:  # none set, or NO_PROXY names the host
                proxy = (None, None)
            origin = (target.scheme, target.host, target.port)
            found = _Target(origin, "\r\n".join(lines), proxy)
            if len(self._targets) >= _MOST_TARGETS:
                self._targets.clear()
            self._targets[key] = found
        return found


class UpdatesRequest(BotApiRequest):
    """The transport of ``getUpdates``: an answer's updates that the poller holds already
    (``PollWindow``: fetched, not confirmed yet, so Telegram sends them again) are
    dropped before python-telegram-bot builds objects of them, which costs far more than
    decoding their JSON (``bench/bench_http.py`` measures both)."""

    def __init__(
        self,
        window: PollWindow,
        reachability: Reachability | None = None,
        **timeouts: float | None,
    ) -> None:
        super().__init__(connection_pool_size=1, reachability=reachability, **timeouts)
        self.window = window

    def parse_json_payload(self, payload: bytes) -> dict[str, Any]:  # type: ignore[override]
        data = super().parse_json_payload(payload)
        result = data.get("result")
        if isinstance(result, list) and len(self.window):
            data["result"] = [
                update
                for update in result
                if not (isinstance(update, dict) and self.window.holds(update.get("update_id")))
            ]
        return data


def lean_update(update: object) -> None:
    """Cut the message of a pressed button in ``update`` (an update as Telegram sends
    it) to ``OWN_MESSAGE_FIELDS``: the message is the bot's own, and the press is read by
    its data, the presser, and the message's chat and id. A user's message is left whole."""
    query = update.get("callback_query") if isinstance(update, dict) else None
    message = query.get("message") if isinstance(query, dict) else None
    if _is_message(message):
        _cut(message)


def _is_message(value: object) -> TypeGuard[dict[str, Any]]:
    return isinstance(value, dict) and "message_id" in value and "chat" in value


def _cut(message: dict[str, Any]) -> None:
    for field in [field for field in message if field not in OWN_MESSAGE_FIELDS]:
        del message[field]


def _given(value: float | object | None, default: float | None) -> float | None:
    """A timeout passed to a call, else this transport's own."""
    if isinstance(value, int | float) or value is None:
        return value
    return default


def _is_json(payload: bytes) -> bool:
    """Whether python-telegram-bot's parser takes ``payload`` (it decodes as this does)."""
    try:
        json.loads(payload.decode("utf-8", "replace"))
    except ValueError:
        return False
    return True


def _status_text(status: int) -> str:
    """An HTTP status as python-telegram-bot words one whose answer has no description."""
    try:
        return f"{HTTPStatus(status).phrase} ({status})"
    except ValueError:
        return f"Unknown HTTPError ({status})"


def _multipart(request_data: RequestData) -> aiohttp.FormData:
    form = aiohttp.FormData()
    for name, value in request_data.json_parameters.items():
        form.add_field(name, value)
    for name, (filename, content, mimetype) in request_data.multipart_data.items():
        form.add_field(name, content, filename=filename, content_type=mimetype)
    return form
