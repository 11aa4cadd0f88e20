"""MemberCheck: who is in a group, for the Mini App (getChatMember, cached as the admin
check is); Telegram failing to say counts as "not in it" and is asked again next time."""

from __future__ import annotations

import pytest
from telegram import ChatMember, ChatMemberRestricted
from telegram.error import BadRequest

from bot.telegram.admins import MemberCheck
from bot.telegram.messenger import Messenger
from tests.helpers.telegram import GROUP, OTHER_GROUP, FakeBot

#: The rights a restricted member's answer carries (Bot API ``ChatMemberRestricted``).
RESTRICTED_RIGHTS = [
    "can_send_messages",
    "can_send_audios",
    "can_send_documents",
    "can_send_photos",
    "can_send_videos",
    "can_send_video_notes",
    "can_send_voice_notes",
    "can_send_polls",
    "can_send_other_messages",
    "can_add_web_page_previews",
    "can_change_info",
    "can_invite_users",
    "can_pin_messages",
    "can_manage_topics",
    "can_edit_tag",
    "can_react_to_messages",
]


@pytest.fixture
def bot() -> FakeBot:
    return FakeBot()


@pytest.fixture
def members(bot: FakeBot) -> MemberCheck:
    messenger = Messenger()
    messenger.attach(bot)
    return MemberCheck(messenger, cache_seconds=60.0)


def asked(bot: FakeBot) -> int:
    return len([call for call in bot.calls if call.method == "get_chat_member"])


@pytest.mark.parametrize(
    ("status", "inside"),
    [
        (ChatMember.OWNER, True),
        (ChatMember.ADMINISTRATOR, True),
        (ChatMember.MEMBER, True),
        (ChatMember.LEFT, False),
        (ChatMember.BANNED, False),
    ],
)
async def test_anyone_but_those_who_left_or_were_banned_is_in_the_group(
    members: MemberCheck, bot: FakeBot, status: str, inside: bool
) -> None:
    bot.statuses[(GROUP, 77)] = status
    assert await members.is_member(GROUP, 77) is inside


async def test_a_restricted_user_is_in_the_group_only_while_telegram_says_so(
    members: MemberCheck, bot: FakeBot
) -> None:
    def restricted(is_member: bool) -> ChatMember:
        # Every right refused: what Telegram sends of a restricted user.
        rights = {name: False for name in RESTRICTED_RIGHTS}
        user = {"id": 77, "is_bot": False, "first_name": "Ann"}
        data = {"status": "restricted", "user": user, "until_date": 0, "is_member": is_member}
        member = ChatMember.de_json({**data, **rights}, None)
        assert isinstance(member, ChatMemberRestricted)
        return member

    answers = {GROUP: restricted(True), OTHER_GROUP: restricted(False)}

    async def get_chat_member(chat_id: int, user_id: int) -> ChatMember:
        return answers[chat_id]

    bot.get_chat_member = get_chat_member  # type: ignore[method-assign]
    assert await members.is_member(GROUP, 77)
    assert not await members.is_member(OTHER_GROUP, 77)


async def test_telegrams_answer_is_cached_and_a_failure_is_asked_again(
    members: MemberCheck, bot: FakeBot
) -> None:
    for _ in range(3):
        assert await members.is_member(GROUP, 5)
    assert asked(bot) == 1
    bot.fail_next(BadRequest("chat not found"), "get_chat_member")
    assert not await members.is_member(OTHER_GROUP, 5)
    assert await members.is_member(OTHER_GROUP, 5)
    assert asked(bot) == 3
    assert members.sizes() == {"answers": 2}
