"""Updates: the queue of what users did, and the two ways out of it Telegram offers, the
``getUpdates`` long poll and a webhook.

The fake records ``setWebhook`` but does not push to it (a local bot cannot serve HTTPS to
it anyway); a test that needs the push takes the queue with ``take_for_webhook``.
"""

from __future__ import annotations

import asyncio
import copy
from dataclasses import dataclass
from typing import Any

from bot.fakegram.changes import Changes
from bot.fakegram.params import ApiError, RequestParams, bad_request

JsonDict = dict[str, Any]

# Telegram's update ids start at an arbitrary large number; bots must not assume 1.
_FIRST_UPDATE_ID = 100_000_001
_MAX_UPDATES_PER_POLL = 100
# Without allowed_updates Telegram sends every update type except these.
_OPT_IN_UPDATE_TYPES = frozenset({"chat_member", "message_reaction", "message_reaction_count"})


@dataclass
class _QueuedUpdate:
    update: JsonDict
    is_redelivery: bool
    delivered: bool = False

    @property
    def update_id(self) -> int:
        update_id: int = self.update["update_id"]
        return update_id

    @property
    def kind(self) -> str:
        return next(key for key in self.update if key != "update_id")


class UpdateQueue:
    """Queued updates and the Bot API methods that hand them out: ``getUpdates``,
    ``setWebhook``, ``deleteWebhook`` and ``getWebhookInfo``."""

    def __init__(self, changes: Changes) -> None:
        self._changes = changes
        self._updates: dict[int, JsonDict] = {}
        self._pending: list[_QueuedUpdate] = []
        self._next_update_id = _FIRST_UPDATE_ID
        self._allowed_updates: frozenset[str] = frozenset()
        self._poll_generation = 0
        self._waiting_polls = 0
        self._webhook: JsonDict | None = None

    # --------------------------------------------------------- the fake's side

    def enqueue(self, kind: str, payload: JsonDict) -> JsonDict:
        """Queue a new update of ``kind`` ("message", "callback_query" …); returns it."""
        update: JsonDict = {"update_id": self._next_update_id, kind: payload}
        self._next_update_id += 1
        self._updates[update["update_id"]] = update
        # Shared with the queue: neither changes an update once queued.
        self._pending.append(_QueuedUpdate(update, is_redelivery=False))
        self._changes.bump()
        return copy.deepcopy(update)

    def redeliver(self, update_id: int) -> JsonDict:
        """Queue an already sent update again, with the same ``update_id``."""
        update = self._updates.get(update_id)
        if update is None:
            raise ValueError(f"no update {update_id} was ever queued")
        self._pending.append(_QueuedUpdate(update, is_redelivery=True))
        self._changes.bump()
        return copy.deepcopy(update)

    @property
    def is_polling(self) -> bool:
        """Whether a ``getUpdates`` long poll is waiting right now."""
        return self._waiting_polls > 0

    def take_for_webhook(self) -> list[JsonDict]:
        """While a webhook is set, take every queued update it would be sent (none otherwise),
        for a test that plays Telegram's push."""
        if self._webhook is None:
            return []
        taken, self._pending = self._pending, []
        return [copy.deepcopy(queued.update) for queued in taken if self._is_allowed(queued.kind)]

    # ------------------------------------------------------------ Bot API

    async def get_updates(self, params: RequestParams) -> list[JsonDict]:
        if self._webhook is not None:
            raise ApiError(
                409,
                "Conflict: can't use getUpdates method while webhook is active; "
                "use deleteWebhook to delete the webhook first",
            )
        offset = params.optional_int("offset")
        limit = min(
            max(params.optional_int("limit") or _MAX_UPDATES_PER_POLL, 1), _MAX_UPDATES_PER_POLL
        )
        timeout = max(params.optional_number("timeout") or 0.0, 0.0)
        self._set_allowed_updates(params)
        self._confirm_updates(offset)
        # A newer getUpdates terminates a waiting older one, as Telegram does.
        self._poll_generation += 1
        generation = self._poll_generation
        self._changes.bump()

        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        self._waiting_polls += 1
        try:
            while True:
                if generation != self._poll_generation:
                    raise ApiError(
                        409,
                        "Conflict: terminated by other getUpdates request; "
                        "make sure that only one bot instance is running",
                    )
                batch = self._take_updates(limit)
                remaining = deadline - loop.time()
                if batch or self._changes.closing or remaining <= 0:
                    return batch
                await self._changes.wait(remaining)
        finally:
            self._waiting_polls -= 1

    async def set_webhook(self, params: RequestParams) -> bool:
        url = params.optional_str("url") or ""
        if not url:
            self._webhook = None
            return True
        if not url.startswith("https://"):
            raise bad_request("bad webhook: An HTTPS URL must be provided for webhook")
        self._set_allowed_updates(params)
        if params.flag("drop_pending_updates"):
            self._pending.clear()
        self._webhook = {
            "url": url,
            "max_connections": params.optional_int("max_connections") or 40,
        }
        return True

    async def delete_webhook(self, params: RequestParams) -> bool:
        if params.flag("drop_pending_updates"):
            self._pending.clear()
        self._webhook = None
        return True

    async def get_webhook_info(self, params: RequestParams) -> JsonDict:
        info: JsonDict = {
            "url": "",
            "has_custom_certificate": False,
            "pending_update_count": len(self._pending),
        }
        if self._webhook is not None:
            info.update(self._webhook)
            if self._allowed_updates:
                info["allowed_updates"] = sorted(self._allowed_updates)
        return info

    # ------------------------------------------------------------ helpers

    def _set_allowed_updates(self, params: RequestParams) -> None:
        allowed = params.optional_json("allowed_updates")
        if allowed is None:
            return  # Telegram keeps the previous setting
        if not isinstance(allowed, list):
            raise bad_request("can't parse allowed_updates JSON object")
        self._allowed_updates = frozenset(str(kind) for kind in allowed)

    def _is_allowed(self, kind: str) -> bool:
        if self._allowed_updates:
            return kind in self._allowed_updates
        return kind not in _OPT_IN_UPDATE_TYPES

    def _confirm_updates(self, offset: int | None) -> None:
        """Forget updates as Telegram does for ``offset`` (see getUpdates)."""
        if not offset:
            return
        if offset < 0:
            self._pending = self._pending[offset:]
            return
        # A redelivered copy has an old id; it must survive until it was actually sent.
        self._pending = [
            queued
            for queued in self._pending
            if queued.update_id >= offset or (queued.is_redelivery and not queued.delivered)
        ]

    def _take_updates(self, limit: int) -> list[JsonDict]:
        self._pending = [queued for queued in self._pending if self._is_allowed(queued.kind)]
        batch = self._pending[:limit]
        for queued in batch:
            queued.delivered = True
        # Clients confirm with the last update's id + 1, so the batch must end with its largest.
        # Not copied: the answer is only encoded to JSON.
        return [queued.update for queued in sorted(batch, key=lambda q: q.update_id)]
