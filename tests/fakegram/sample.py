"""Chats and users shared by the fake Telegram tests."""

from typing import Any

GROUP_ID = -1001234567890
OTHER_GROUP_ID = -1009876543210
ALICE: dict[str, Any] = {"id": 1001, "first_name": "Alice", "username": "alice"}
BOB: dict[str, Any] = {"id": 1002, "first_name": "Bob", "last_name": "Builder"}
