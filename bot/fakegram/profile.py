"""The bot's own account: ``getMe``, ``logOut``/``close`` and its command menus
(``setMyCommands``, ``deleteMyCommands``, ``getMyCommands``)."""

from __future__ import annotations

import copy
import re
from typing import Any

from bot.fakegram.params import RequestParams, bad_request

JsonDict = dict[str, Any]

_MAX_COMMANDS = 100
_COMMAND_NAME = re.compile(r"[a-z0-9_]{1,32}")
#: A menu's language: "A two-letter ISO 639-1 language code" (the Bot API), or none.
_LANGUAGE_CODE = re.compile(r"[a-z]{2}")


class BotProfile:
    """Who the bot is, and the commands it set per scope and language."""

    def __init__(self, bot_user: JsonDict) -> None:
        self.bot_user = bot_user
        self._commands: dict[tuple[str, str], list[JsonDict]] = {}

    async def get_me(self, params: RequestParams) -> JsonDict:
        return {
            **self.bot_user,
            "can_join_groups": True,
            "can_read_all_group_messages": True,
            "supports_inline_queries": False,
            "can_connect_to_business": False,
            "has_main_web_app": False,
        }

    async def log_out(self, params: RequestParams) -> bool:
        return True

    async def set_my_commands(self, params: RequestParams) -> bool:
        commands = params.optional_json("commands")
        if not isinstance(commands, list):
            raise bad_request("can't parse commands JSON object")
        if len(commands) > _MAX_COMMANDS:
            raise bad_request("BOT_COMMANDS_TOO_MUCH")
        stored = []
        for command in commands:
            if not isinstance(command, dict):
                raise bad_request("can't parse BotCommand JSON object")
            name = str(command.get("command", ""))
            description = str(command.get("description", ""))
            if not _COMMAND_NAME.fullmatch(name):
                raise bad_request("BOT_COMMAND_INVALID")
            if not (1 <= len(description) <= 256):
                raise bad_request("BOT_COMMAND_DESCRIPTION_INVALID")
            stored.append({"command": name, "description": description})
        self._commands[_commands_key(params)] = stored
        return True

    async def delete_my_commands(self, params: RequestParams) -> bool:
        self._commands.pop(_commands_key(params), None)
        return True

    async def get_my_commands(self, params: RequestParams) -> list[JsonDict]:
        return copy.deepcopy(self._commands.get(_commands_key(params), []))


def _commands_key(params: RequestParams) -> tuple[str, str]:
    scope = params.optional_json("scope") or {"type": "default"}
    if not isinstance(scope, dict) or "type" not in scope:
        raise bad_request("can't parse BotCommandScope JSON object")
    scope_key = ",".join(f"{key}={scope[key]}" for key in sorted(scope))
    language = params.optional_str("language_code") or ""
    if language and not _LANGUAGE_CODE.fullmatch(language):
        raise bad_request("LANGUAGE_CODE_INVALID")
    return scope_key, language
