"""python-telegram-bot's ``ExtBot`` and the loop's timers are what the shell's protocols ask
(``bot.telegram.telegram_needs``): the ``Application`` hands them over typed ``Any``, so
mypy checks them here, and each method takes the protocol's parameters, by the same
names (and those passed by position, at the same places)."""

from __future__ import annotations

import inspect
from typing import Any

import pytest
from telegram.ext import ExtBot

from bot.telegram.telegram_needs import BotApi, Timers
from bot.telegram.timers import LoopTimers


def test_the_application_s_bot_and_the_loop_s_timers_are_what_the_shell_needs() -> None:
    bot: BotApi = ExtBot("123:TEST")
    timers: Timers = LoopTimers(lambda coroutine: None)
    assert bot.send_message is not None and timers.run_once is not None


def members(protocol: type) -> list[str]:
    return [name for name in vars(protocol) if not name.startswith("_")]


def positional(signature: inspect.Signature) -> list[str]:
    kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    return [p.name for p in signature.parameters.values() if p.kind in kinds]


@pytest.mark.parametrize(
    ("protocol", "real", "method"),
    [
        *[(BotApi, ExtBot, method) for method in members(BotApi)],
        *[(Timers, LoopTimers, method) for method in members(Timers)],
    ],
)
def test_each_method_takes_the_protocol_s_parameters(
    protocol: type, real: type[Any], method: str
) -> None:
    wanted = inspect.signature(getattr(protocol, method))
    taken = inspect.signature(getattr(real, method))
    assert set(wanted.parameters) <= set(taken.parameters)
    by_position = positional(wanted)
    assert positional(taken)[: len(by_position)] == by_position
