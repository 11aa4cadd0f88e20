"""AdminCheck: operators, group owners and administrators (getChatMember, cached), a
Telegram error counting as "not an admin", and the group's title noted when it changed."""

from __future__ import annotations

import logging

import pytest
from telegram import ChatMember
from telegram.error import NetworkError, TelegramError

from bot.engine.errors import GameError
from bot.service.game import Person
from bot.telegram.admins import AdminCheck
from bot.telegram.messenger import Messenger
from tests.helpers.telegram import GROUP, OTHER_GROUP, FakeBot, FakeService, message_update, person

OPERATOR = 4242
OWNER, ADMIN, PLAYER = 1, 2, 3


@pytest.fixture
def bot() -> FakeBot:
    bot = FakeBot()
    bot.statuses = {(GROUP, OWNER): ChatMember.OWNER, (GROUP, ADMIN): ChatMember.ADMINISTRATOR}
    return bot


@pytest.fixture
def service() -> FakeService:
    return FakeService()


@pytest.fixture
def admins(bot: FakeBot, service: FakeService) -> AdminCheck:
    messenger = Messenger()
    messenger.attach(bot)
    return AdminCheck(service, messenger, frozenset({OPERATOR}), cache_seconds=60.0)


def asked(bot: FakeBot) -> list[tuple[int, int]]:
    """The (chat, user) pairs asked of Telegram, in order."""
    return [
        (call.args["chat_id"], call.args["user_id"])
        for call in bot.calls
        if call.method == "get_chat_member"
    ]


@pytest.mark.parametrize(
    ("status", "allowed"),
    [
        (ChatMember.OWNER, True),
        (ChatMember.ADMINISTRATOR, True),
        (ChatMember.MEMBER, False),
        (ChatMember.RESTRICTED, False),
        (ChatMember.LEFT, False),
        (ChatMember.BANNED, False),
    ],
)
async def test_group_owners_and_administrators_are_admins_and_no_one_else(
    admins: AdminCheck, bot: FakeBot, status: str, allowed: bool
) -> None:
    bot.statuses[(GROUP, 77)] = status

    assert await admins.is_admin(GROUP, 77) is allowed


async def test_an_operator_is_an_admin_without_asking_telegram(
    admins: AdminCheck, bot: FakeBot
) -> None:
    assert await admins.is_admin(GROUP, OPERATOR)
    assert asked(bot) == []


async def test_telegrams_answer_is_cached_per_chat_and_user(
    admins: AdminCheck, bot: FakeBot
) -> None:
    for _ in range(3):
        assert await admins.is_admin(GROUP, ADMIN)
        assert not await admins.is_admin(GROUP, PLAYER)
    assert not await admins.is_admin(OTHER_GROUP, ADMIN)  # an admin elsewhere only

    assert asked(bot) == [(GROUP, ADMIN), (GROUP, PLAYER), (OTHER_GROUP, ADMIN)]


@pytest.mark.parametrize("error", [NetworkError("connection reset"), TelegramError("odd")])
async def test_a_telegram_error_means_not_an_admin_and_is_asked_again_next_time(
    admins: AdminCheck, bot: FakeBot, error: TelegramError, caplog: pytest.LogCaptureFixture
) -> None:
    bot.fail_next(error, "get_chat_member")

    with caplog.at_level(logging.WARNING, logger="bot.telegram.admins"):
        assert await admins.is_admin(GROUP, OWNER) is False
    assert str(error) in caplog.text

    assert await admins.is_admin(GROUP, OWNER) is True  # not remembered as "no"
    assert asked(bot) == [(GROUP, OWNER), (GROUP, OWNER)]


async def test_require_refuses_anyone_but_an_admin(
    admins: AdminCheck, service: FakeService
) -> None:
    update = message_update(GROUP, person(PLAYER, "Pat"), "/credit 5", title="Tea room")

    with pytest.raises(GameError) as refused:
        await admins.require(update)

    assert refused.value.key == "not_admin"
    assert service.called("note_chat") == []


async def test_require_gives_the_group_and_the_admin_and_notes_the_title_when_it_changed(
    admins: AdminCheck, service: FakeService
) -> None:
    owner = person(OWNER, "Olga", username="olga")

    first = await admins.require(message_update(GROUP, owner, "/open", title="Tea room"))
    await admins.require(message_update(GROUP, owner, "/close", title="Tea room"))
    await admins.require(message_update(GROUP, owner, "/open", title="Tea & cake room"))

    assert first == (GROUP, Person(OWNER, "Olga", "olga"))
    assert [call.args for call in service.called("note_chat")] == [
        (GROUP, "Tea room"),
        (GROUP, "Tea & cake room"),
    ]
