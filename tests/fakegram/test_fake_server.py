"""Real HTTP round trips between python-telegram-bot and the fake Bot API server."""

import asyncio
import datetime as dtm
import json
import time
from typing import Any

import aiohttp
import pytest
from telegram import (
    Bot,
    BotCommand,
    BotCommandScopeChat,
    ChatMemberAdministrator,
    ChatMemberBanned,
    ChatMemberLeft,
    ChatMemberMember,
    ChatMemberOwner,
    ChatMemberRestricted,
    InlineKeyboardButton,
    InlineKeyboardMarkup,
    Message,
    Update,
)
from telegram.constants import ParseMode
from telegram.error import BadRequest, Conflict, InvalidToken, RetryAfter
from telegram.ext import Application, CommandHandler, ContextTypes

from bot.fakegram import FakeTelegram
from tests.fakegram.sample import ALICE, BOB, GROUP_ID, OTHER_GROUP_ID

GRAB_KEYBOARD = InlineKeyboardMarkup([[InlineKeyboardButton("Grab", callback_data="grab")]])


async def raw_call(fake: FakeTelegram, method: str, **kwargs: Any) -> tuple[int, Any]:
    """POST to the Bot API without python-telegram-bot; returns (HTTP status, JSON body)."""
    async with (
        aiohttp.ClientSession() as session,
        session.post(f"{fake.base_url}{fake.token}/{method}", **kwargs) as response,
    ):
        return response.status, await response.json()


# --------------------------------------------------------------------------- basics


async def test_get_me_describes_the_bot(bot: Bot) -> None:
    me = await bot.get_me()

    assert me.is_bot
    assert me.username == "niuniu_test_bot"
    assert me.can_join_groups
    assert me.can_read_all_group_messages
    assert not me.supports_inline_queries


async def test_wrong_token_is_unauthorized(fake: FakeTelegram) -> None:
    with pytest.raises(InvalidToken):
        async with Bot("999:WRONG", base_url=fake.base_url):
            pass

    async with (
        aiohttp.ClientSession() as session,
        session.post(f"{fake.base_url}999:WRONG/getMe") as response,
    ):
        assert response.status == 401
        assert await response.json() == {
            "ok": False,
            "error_code": 401,
            "description": "Unauthorized",
        }


async def test_a_hosted_fake_bot_is_reached_at_the_hosts_address(fake: FakeTelegram) -> None:
    # One address for several bots, as Telegram's: each token reaches its own bot's chats.
    async with FakeTelegram(token="654321:SECOND", bot_username="second_bot") as second:
        fake.host(second)
        async with Bot(second.token, base_url=fake.base_url) as other:
            assert (await other.get_me()).username == "second_bot"
            await other.send_message(GROUP_ID, "from the second bot")
        assert [e["text"] for e in second.transcript(GROUP_ID)] == ["from the second bot"]
        assert fake.transcript(GROUP_ID) == []
        assert {call["method"] for call in second.calls} == {"getMe", "sendMessage"}
        assert fake.calls == []
        with pytest.raises(InvalidToken):
            async with Bot("777:NOBODY", base_url=fake.base_url):
                pass


async def test_unknown_method_is_not_found(fake: FakeTelegram) -> None:
    status, body = await raw_call(fake, "sendTelepathy", json={"chat_id": GROUP_ID})

    assert status == 404
    assert body == {"ok": False, "error_code": 404, "description": "Not Found"}


async def test_method_names_are_case_insensitive(fake: FakeTelegram) -> None:
    status, body = await raw_call(fake, "GETME")

    assert status == 200
    assert body["result"]["username"] == "niuniu_test_bot"


@pytest.mark.parametrize("encoding", ["json", "urlencoded", "multipart"])
async def test_every_request_encoding_is_accepted(fake: FakeTelegram, encoding: str) -> None:
    markup = {"inline_keyboard": [[{"text": "Grab", "callback_data": "grab"}]]}
    kwargs: dict[str, Any]
    if encoding == "json":
        kwargs = {"json": {"chat_id": GROUP_ID, "text": "hi", "reply_markup": markup}}
    else:
        fields = {"chat_id": str(GROUP_ID), "text": "hi", "reply_markup": json.dumps(markup)}
        if encoding == "urlencoded":
            kwargs = {"data": fields}
        else:
            form = aiohttp.FormData()
            for name, value in fields.items():
                form.add_field(name, value)
            kwargs = {"data": form}

    status, body = await raw_call(fake, "sendMessage", **kwargs)

    assert status == 200, body
    assert body["result"]["reply_markup"] == markup
    assert fake.messages(GROUP_ID)[1]["reply_markup"] == markup


async def test_calls_are_logged_with_their_outcome(fake: FakeTelegram, bot: Bot) -> None:
    await bot.send_message(GROUP_ID, "hello")
    with pytest.raises(BadRequest):
        await bot.send_message(GROUP_ID, " ")

    sends = [call for call in fake.calls if call["method"] == "sendMessage"]
    assert [call["ok"] for call in sends] == [True, False]
    assert sends[0]["params"]["text"] == "hello"
    assert sends[1]["description"] == "Bad Request: message text is empty"


# ------------------------------------------------------------------------- messages


async def test_message_ids_are_per_chat_and_shared_with_users(fake: FakeTelegram, bot: Bot) -> None:
    user_update = fake.post_message(GROUP_ID, ALICE, "hi bot")
    reply = await bot.send_message(GROUP_ID, "hi Alice")
    elsewhere = await bot.send_message(OTHER_GROUP_ID, "first here")

    assert user_update["message"]["message_id"] == 1
    assert reply.message_id == 2
    assert elsewhere.message_id == 1
    assert reply.from_user is not None and reply.from_user.username == "niuniu_test_bot"
    assert reply.chat.type == "supergroup"
    assert isinstance(reply.date, dtm.datetime)


async def test_send_message_replies_and_is_recorded(fake: FakeTelegram, bot: Bot) -> None:
    question = fake.post_message(GROUP_ID, ALICE, "who wins?")["message"]

    answer = await bot.send_message(
        GROUP_ID,
        "<b>Bob</b> wins",
        parse_mode=ParseMode.HTML,
        reply_to_message_id=question["message_id"],
    )

    assert answer.text == "Bob wins"
    assert answer.reply_to_message is not None
    assert answer.reply_to_message.text == "who wins?"
    [entry] = fake.transcript(GROUP_ID)
    assert entry["kind"] == "send"
    assert entry["message_id"] == answer.message_id
    assert entry["text"] == "<b>Bob</b> wins"
    assert entry["plain_text"] == "Bob wins"
    assert entry["parse_mode"] == "HTML"
    assert entry["reply_to_message_id"] == question["message_id"]


async def test_a_held_send_waits_for_its_release_and_others_go_on(
    fake: FakeTelegram, bot: Bot
) -> None:
    fake.hold_sends(r"^Results")
    held = asyncio.create_task(bot.send_message(GROUP_ID, "Results of round 7"))
    await fake.wait_for(lambda: fake.held_sends == 1)
    await bot.send_message(GROUP_ID, "a reply meanwhile")
    assert [e["plain_text"] for e in fake.transcript(GROUP_ID)] == ["a reply meanwhile"]
    fake.release_sends()
    sent = await held
    assert sent.text == "Results of round 7"
    assert fake.held_sends == 0
    await bot.send_message(GROUP_ID, "Results again")  # released: no longer held
    assert len(fake.transcript(GROUP_ID)) == 3


async def _send_and_go_away(fake: FakeTelegram, text: str) -> None:
    """A sendMessage whose client disappears (as when a bot is killed) while it is held."""

    async def send() -> None:
        async with aiohttp.ClientSession() as session:
            url = f"{fake.base_url}{fake.token}/sendMessage"
            await session.post(url, json={"chat_id": GROUP_ID, "text": text})

    client = asyncio.create_task(send())
    await fake.wait_for(lambda: fake.held_sends == 1)
    client.cancel()  # closes the connection
    await fake.wait_for(lambda: fake.held_sends == 0)


async def test_a_send_held_before_delivery_is_never_delivered_if_its_bot_goes_away(
    fake: FakeTelegram,
) -> None:
    fake.hold_sends("Results")
    await _send_and_go_away(fake, "Results of round 7")
    fake.release_sends()
    assert fake.transcript(GROUP_ID) == []
    assert fake.messages(GROUP_ID) == {}


async def test_a_send_held_after_delivery_is_in_the_chat_though_its_bot_goes_away(
    fake: FakeTelegram,
) -> None:
    fake.hold_sends("Results", delivered_first=True)
    await _send_and_go_away(fake, "Results of round 7")
    assert [e["plain_text"] for e in fake.transcript(GROUP_ID)] == ["Results of round 7"]


async def test_reply_to_a_missing_message_fails_unless_allowed(bot: Bot) -> None:
    with pytest.raises(BadRequest, match="Message to be replied not found"):
        await bot.send_message(GROUP_ID, "hi", reply_to_message_id=99)

    sent = await bot.send_message(
        GROUP_ID, "hi", reply_to_message_id=99, allow_sending_without_reply=True
    )
    assert sent.reply_to_message is None


async def test_empty_and_too_long_texts_are_rejected(bot: Bot) -> None:
    with pytest.raises(BadRequest, match="Message text is empty"):
        await bot.send_message(GROUP_ID, " \n ")
    with pytest.raises(BadRequest, match="Message is too long"):
        await bot.send_message(GROUP_ID, "a" * 4097)

    longest = await bot.send_message(GROUP_ID, "a" * 4096)
    # Only the text left after entity parsing counts towards the limit.
    formatted = await bot.send_message(GROUP_ID, f"<b>{'a' * 4096}</b>", parse_mode=ParseMode.HTML)

    assert longest.text == formatted.text == "a" * 4096


async def test_html_entities_are_decoded(bot: Bot) -> None:
    sent = await bot.send_message(
        GROUP_ID, "&lt;b&gt;&amp; <b>bold</b> 😀<i>x</i>", parse_mode=ParseMode.HTML
    )

    assert sent.text == "<b>& bold 😀x"
    assert [(entity.type, entity.offset, entity.length) for entity in sent.entities] == [
        ("bold", 5, 4),
        ("italic", 12, 1),  # the emoji takes two UTF-16 code units
    ]


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("<x>hi</x>", 'unsupported start tag "x" at byte offset 0'),
        ("Tom & Jerry", 'character "&" at byte offset 4 must be escaped as "&amp;"'),
        ("1 < 2", 'unsupported start tag "" at byte offset 2'),
        ("<b>bold", 'can\'t find end tag corresponding to start tag "b"'),
        ("<b>bold</i>", 'unmatched end tag at byte offset 7, expected "</b>", found "</i>"'),
    ],
)
async def test_invalid_html_is_rejected_like_telegram(bot: Bot, text: str, reason: str) -> None:
    with pytest.raises(BadRequest) as raised:
        await bot.send_message(GROUP_ID, text, parse_mode=ParseMode.HTML)

    assert raised.value.message.lower() == f"can't parse entities: {reason}"


async def test_text_without_parse_mode_is_taken_literally(bot: Bot) -> None:
    sent = await bot.send_message(GROUP_ID, "<x> & y")

    assert sent.text == "<x> & y"


async def test_oversized_callback_data_is_rejected(bot: Bot) -> None:
    keyboard = InlineKeyboardMarkup([[InlineKeyboardButton("Grab", callback_data="g" * 65)]])

    with pytest.raises(BadRequest, match=r"(?i)button_data_invalid"):
        await bot.send_message(GROUP_ID, "round 1", reply_markup=keyboard)


# ---------------------------------------------------------------- edit and delete


async def test_edit_message_text(fake: FakeTelegram, bot: Bot) -> None:
    sent = await bot.send_message(GROUP_ID, "round 1", reply_markup=GRAB_KEYBOARD)

    edited = await bot.edit_message_text(
        "round 1: 2 left", GROUP_ID, sent.message_id, reply_markup=GRAB_KEYBOARD
    )

    assert isinstance(edited, Message)
    assert edited.text == "round 1: 2 left"
    assert edited.edit_date is not None
    assert fake.messages(GROUP_ID)[sent.message_id]["text"] == "round 1: 2 left"
    assert [entry["kind"] for entry in fake.transcript(GROUP_ID)] == ["send", "edit"]


async def test_identical_edit_is_not_modified(bot: Bot) -> None:
    sent = await bot.send_message(GROUP_ID, "round 1", reply_markup=GRAB_KEYBOARD)

    with pytest.raises(BadRequest, match="Message is not modified"):
        await bot.edit_message_text(
            "round 1", GROUP_ID, sent.message_id, reply_markup=GRAB_KEYBOARD
        )
    with pytest.raises(BadRequest, match="Message is not modified"):
        await bot.edit_message_reply_markup(GROUP_ID, sent.message_id, reply_markup=GRAB_KEYBOARD)


async def test_edit_without_markup_removes_the_keyboard(fake: FakeTelegram, bot: Bot) -> None:
    sent = await bot.send_message(GROUP_ID, "round 1", reply_markup=GRAB_KEYBOARD)

    # Same text, but omitting reply_markup is a change: Telegram drops the keyboard.
    edited = await bot.edit_message_text("round 1", GROUP_ID, sent.message_id)

    assert isinstance(edited, Message)
    assert edited.reply_markup is None
    assert fake.messages(GROUP_ID)[sent.message_id]["reply_markup"] is None


async def test_edit_reply_markup(fake: FakeTelegram, bot: Bot) -> None:
    sent = await bot.send_message(GROUP_ID, "round 1", reply_markup=GRAB_KEYBOARD)

    await bot.edit_message_reply_markup(GROUP_ID, sent.message_id, reply_markup=None)

    assert fake.messages(GROUP_ID)[sent.message_id]["reply_markup"] is None
    assert fake.transcript(GROUP_ID)[-1]["kind"] == "edit"


async def test_only_existing_bot_messages_can_be_edited(fake: FakeTelegram, bot: Bot) -> None:
    user_message = fake.post_message(GROUP_ID, ALICE, "mine")["message"]

    with pytest.raises(BadRequest, match="Message to edit not found"):
        await bot.edit_message_text("x", GROUP_ID, 42)
    with pytest.raises(BadRequest, match="Message can't be edited"):
        await bot.edit_message_text("x", GROUP_ID, user_message["message_id"])


async def test_delete_message(fake: FakeTelegram, bot: Bot) -> None:
    sent = await bot.send_message(GROUP_ID, "bye")

    assert await bot.delete_message(GROUP_ID, sent.message_id)
    with pytest.raises(BadRequest, match="Message to delete not found"):
        await bot.delete_message(GROUP_ID, sent.message_id)
    assert fake.messages(GROUP_ID) == {}
    assert [entry["kind"] for entry in fake.transcript(GROUP_ID)] == ["send", "delete"]


async def test_deleting_user_messages_needs_admin_rights(fake: FakeTelegram, bot: Bot) -> None:
    message_id = fake.post_message(GROUP_ID, ALICE, "spam")["message"]["message_id"]

    with pytest.raises(BadRequest, match="Message can't be deleted"):
        await bot.delete_message(GROUP_ID, message_id)
    fake.set_chat_member(GROUP_ID, bot.id, "administrator")
    assert await bot.delete_message(GROUP_ID, message_id)


# ------------------------------------------------------------------ callback queries


async def test_button_press_arrives_as_callback_query(fake: FakeTelegram, bot: Bot) -> None:
    sent = await bot.send_message(GROUP_ID, "round 1", reply_markup=GRAB_KEYBOARD)

    fake.press_button(GROUP_ID, sent.message_id, ALICE, "grab")
    fake.press_button(GROUP_ID, sent.message_id, BOB, "grab")
    first, second = await bot.get_updates()

    assert first.callback_query is not None and second.callback_query is not None
    assert first.callback_query.data == "grab"
    assert first.callback_query.from_user.id == ALICE["id"]
    assert first.callback_query.chat_instance == second.callback_query.chat_instance
    assert first.callback_query.id != second.callback_query.id
    message = first.callback_query.message
    assert isinstance(message, Message)
    assert message.message_id == sent.message_id
    assert message.reply_markup == GRAB_KEYBOARD


async def test_answer_callback_query(fake: FakeTelegram, bot: Bot) -> None:
    sent = await bot.send_message(GROUP_ID, "round 1", reply_markup=GRAB_KEYBOARD)
    before = time.time()
    query_id = fake.press_button(GROUP_ID, sent.message_id, ALICE, "grab")["callback_query"]["id"]
    pressed = time.time()

    with pytest.raises(BadRequest, match=r"(?i)message_too_long"):
        await bot.answer_callback_query(query_id, text="x" * 201)
    assert await bot.answer_callback_query(query_id, text="You got 8.88", show_alert=True)
    with pytest.raises(BadRequest, match="Query is too old"):
        await bot.answer_callback_query(query_id, text="again")
    with pytest.raises(BadRequest, match="Query is too old"):
        await bot.answer_callback_query("12345")

    [answer] = fake.callback_answers
    assert answer["callback_query_id"] == query_id
    assert answer["user_id"] == ALICE["id"]
    assert answer["message_id"] == sent.message_id
    assert answer["text"] == "You got 8.88"
    assert answer["show_alert"] is True
    # When the press was queued, and when it was answered (after it).
    assert before <= answer["pressed_at"] <= pressed <= answer["time"]


async def test_pressing_a_button_of_no_bot_message_is_a_test_mistake(fake: FakeTelegram) -> None:
    message_id = fake.post_message(GROUP_ID, ALICE, "hi")["message"]["message_id"]

    with pytest.raises(ValueError, match="no bot message"):
        fake.press_button(GROUP_ID, message_id, ALICE, "grab")


# -------------------------------------------------------------------- chat members


async def test_get_chat_member_statuses_parse_in_ptb(fake: FakeTelegram, bot: Bot) -> None:
    fake.post_message(GROUP_ID, ALICE, "hi")
    expected_types = {
        "creator": ChatMemberOwner,
        "administrator": ChatMemberAdministrator,
        "member": ChatMemberMember,
        "restricted": ChatMemberRestricted,
        "left": ChatMemberLeft,
        "kicked": ChatMemberBanned,
    }

    default = await bot.get_chat_member(GROUP_ID, ALICE["id"])
    assert isinstance(default, ChatMemberMember)
    assert default.user.first_name == "Alice"
    for status, member_type in expected_types.items():
        fake.set_chat_member(GROUP_ID, ALICE["id"], status)
        member = await bot.get_chat_member(GROUP_ID, ALICE["id"])
        assert isinstance(member, member_type), status
        assert member.status == status
        assert member.user.username == "alice"


async def test_set_chat_member_rejects_unknown_status(fake: FakeTelegram) -> None:
    with pytest.raises(ValueError, match="status must be one of"):
        fake.set_chat_member(GROUP_ID, ALICE["id"], "owner")


# ---------------------------------------------------------------------- getUpdates


async def test_user_messages_carry_bot_command_entities(fake: FakeTelegram, bot: Bot) -> None:
    fake.post_message(GROUP_ID, ALICE, "/ping@niuniu_test_bot now")

    [update] = await bot.get_updates()

    assert update.message is not None
    [entity] = update.message.entities
    assert (entity.type, entity.offset, entity.length) == ("bot_command", 0, 21)
    assert update.message.chat.title == "Test group"


async def test_long_poll_returns_as_soon_as_a_message_arrives(fake: FakeTelegram, bot: Bot) -> None:
    loop = asyncio.get_running_loop()
    poll = asyncio.create_task(bot.get_updates(timeout=10))
    await fake.wait_for(lambda: fake.is_polling)

    posted_at = loop.time()
    update = fake.post_message(GROUP_ID, ALICE, "hello")
    updates = await asyncio.wait_for(poll, timeout=2)

    assert loop.time() - posted_at < 1
    assert [received.update_id for received in updates] == [update["update_id"]]


async def test_long_poll_times_out_empty(fake: FakeTelegram) -> None:
    loop = asyncio.get_running_loop()
    started = loop.time()

    status, body = await raw_call(fake, "getUpdates", json={"timeout": 0.2})

    assert (status, body["result"]) == (200, [])
    assert loop.time() - started >= 0.2


async def test_offset_confirms_updates(fake: FakeTelegram, bot: Bot) -> None:
    first = fake.post_message(GROUP_ID, ALICE, "one")["update_id"]
    second = fake.post_message(GROUP_ID, ALICE, "two")["update_id"]

    assert [u.update_id for u in await bot.get_updates()] == [first, second]
    assert [u.update_id for u in await bot.get_updates()] == [first, second]  # unconfirmed
    assert [u.update_id for u in await bot.get_updates(offset=first + 1)] == [second]
    assert await bot.get_updates(offset=second + 1) == ()
    assert await bot.get_updates() == ()
    # The call log says which updates each poll answered (a bench times their fetching).
    polls = [call["update_ids"] for call in fake.calls if call["method"] == "getUpdates"]
    assert polls == [[first, second], [first, second], [second], [], []]


async def test_negative_offset_keeps_only_the_latest(fake: FakeTelegram, bot: Bot) -> None:
    for text in ("one", "two", "three"):
        last = fake.post_message(GROUP_ID, ALICE, text)["update_id"]

    assert [u.update_id for u in await bot.get_updates(offset=-1)] == [last]
    assert [u.update_id for u in await bot.get_updates()] == [last]


async def test_limit_caps_the_batch(fake: FakeTelegram, bot: Bot) -> None:
    ids = [fake.post_message(GROUP_ID, ALICE, str(n))["update_id"] for n in range(3)]

    assert [u.update_id for u in await bot.get_updates(limit=2)] == ids[:2]


async def test_allowed_updates_filters_update_types(fake: FakeTelegram, bot: Bot) -> None:
    sent = await bot.send_message(GROUP_ID, "round 1", reply_markup=GRAB_KEYBOARD)
    fake.press_button(GROUP_ID, sent.message_id, ALICE, "grab")
    message_update = fake.post_message(GROUP_ID, ALICE, "hi")

    updates = await bot.get_updates(allowed_updates=["message"])

    assert [u.update_id for u in updates] == [message_update["update_id"]]


async def test_redelivery_repeats_the_update_id(fake: FakeTelegram, bot: Bot) -> None:
    update_id = fake.post_message(GROUP_ID, ALICE, "/grab")["update_id"]
    [first] = await bot.get_updates()
    assert await bot.get_updates(offset=update_id + 1) == ()

    fake.redeliver(update_id)
    [again] = await bot.get_updates(offset=update_id + 1)

    assert again.update_id == first.update_id == update_id
    assert again.message is not None and again.message.text == "/grab"
    assert await bot.get_updates(offset=update_id + 1) == ()


async def test_a_newer_poll_terminates_the_older_one(fake: FakeTelegram, bot: Bot) -> None:
    older = asyncio.create_task(bot.get_updates(timeout=10))
    await fake.wait_for(lambda: fake.is_polling)

    status, body = await raw_call(fake, "getUpdates", json={"timeout": 0})

    assert (status, body["result"]) == (200, [])
    with pytest.raises(Conflict, match="terminated by other getUpdates request"):
        await older


async def test_delete_webhook_can_drop_pending_updates(fake: FakeTelegram, bot: Bot) -> None:
    fake.post_message(GROUP_ID, ALICE, "old news")

    assert await bot.delete_webhook(drop_pending_updates=True)
    assert await bot.get_updates() == ()


async def test_webhook_blocks_polling_until_deleted(fake: FakeTelegram, bot: Bot) -> None:
    with pytest.raises(BadRequest, match=r"(?i)an https url must be provided"):
        await bot.set_webhook("http://127.0.0.1:9/hook")
    assert await bot.set_webhook("https://example.com/hook")
    assert (await bot.get_webhook_info()).url == "https://example.com/hook"

    with pytest.raises(Conflict, match="webhook is active"):
        await bot.get_updates()
    assert await bot.delete_webhook()
    assert (await bot.get_webhook_info()).url == ""
    assert await bot.get_updates() == ()


# ------------------------------------------------------------- flood limit


async def test_group_flood_limit_answers_429(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PTB_TIMEDELTA", "true")  # PTB 23's retry_after type, no deprecation
    async with (
        FakeTelegram(group_message_limit_per_minute=2) as fake,
        Bot(fake.token, base_url=fake.base_url) as bot,
    ):
        await bot.send_message(GROUP_ID, "one")
        await bot.send_message(GROUP_ID, "two")
        with pytest.raises(RetryAfter) as raised:
            await bot.send_message(GROUP_ID, "three")
        await bot.send_message(OTHER_GROUP_ID, "other groups have their own budget")
        await bot.send_message(ALICE["id"], "private chats are not limited")
        await bot.send_message(ALICE["id"], "private chats are not limited")
        await bot.send_message(ALICE["id"], "private chats are not limited")

        status, body = await raw_call(fake, "sendMessage", json={"chat_id": GROUP_ID, "text": "x"})

    assert raised.value.retry_after == dtm.timedelta(seconds=60)
    assert status == 429
    assert body == {
        "ok": False,
        "error_code": 429,
        "description": "Too Many Requests: retry after 60",
        "parameters": {"retry_after": 60},
    }
    assert [entry["plain_text"] for entry in fake.transcript(GROUP_ID)] == ["one", "two"]


# -------------------------------------------------------------- other methods


async def test_my_commands_per_scope(bot: Bot) -> None:
    group_scope = BotCommandScopeChat(GROUP_ID)
    assert await bot.set_my_commands([BotCommand("ping", "Check the bot")])
    assert await bot.set_my_commands([BotCommand("grab", "Grab")], scope=group_scope)

    assert await bot.get_my_commands() == (BotCommand("ping", "Check the bot"),)
    assert await bot.get_my_commands(scope=group_scope) == (BotCommand("grab", "Grab"),)
    assert await bot.delete_my_commands()
    assert await bot.get_my_commands() == ()
    with pytest.raises(BadRequest, match=r"(?i)bot_command_invalid"):
        await bot.set_my_commands([BotCommand("Ping", "uppercase is invalid")])
    assert await bot.set_my_commands([BotCommand("grab", "Giật")], language_code="vi")
    assert await bot.get_my_commands(language_code="vi") == (BotCommand("grab", "Giật"),)
    assert await bot.get_my_commands() == ()
    with pytest.raises(BadRequest, match=r"(?i)language_code_invalid"):
        await bot.set_my_commands([BotCommand("grab", "搶")], language_code="zh-Hant")


async def test_send_chat_action(bot: Bot) -> None:
    assert await bot.send_chat_action(GROUP_ID, "typing")
    with pytest.raises(BadRequest, match="Wrong parameter action"):
        await bot.send_chat_action(GROUP_ID, "dancing")


async def test_log_out_and_close(bot: Bot) -> None:
    assert await bot.log_out()
    assert await bot.close()


# ------------------------------------------------------------ a whole PTB app


async def test_application_answers_ping_while_polling(fake: FakeTelegram) -> None:
    async def ping(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        assert update.effective_message is not None
        await update.effective_message.reply_text("pong")

    app = Application.builder().token(fake.token).base_url(fake.base_url).build()
    app.add_handler(CommandHandler("ping", ping))
    await app.initialize()
    await app.start()
    assert app.updater is not None
    await app.updater.start_polling(poll_interval=0, timeout=1)
    try:
        fake.post_message(GROUP_ID, ALICE, "/ping@some_other_bot")
        ping_update = fake.post_message(GROUP_ID, BOB, "/ping@niuniu_test_bot")

        pong = await fake.wait_for(
            lambda: [e for e in fake.transcript(GROUP_ID) if e["plain_text"] == "pong"]
        )
    finally:
        await app.updater.stop()
        await app.stop()
        await app.shutdown()

    # Updates are handled in order, so the command for the other bot was already skipped.
    [entry] = pong
    assert entry["reply_to_message_id"] == ping_update["message"]["message_id"]
    assert not [call for call in fake.calls if not call["ok"]]


# ----------------------------------------------------------------------- round trip


async def test_a_round_trip_delays_every_answer_and_the_call_by_half_of_it() -> None:
    async with FakeTelegram(round_trip_ms=400) as fake:
        loop = asyncio.get_running_loop()
        started = loop.time()
        call = asyncio.create_task(raw_call(fake, "getMe"))
        await asyncio.sleep(0.1)
        assert fake.calls == []  # still on its way to Telegram
        status, body = await call
        took = loop.time() - started
        refused = await raw_call(fake, "noSuchMethod")
    assert status == 200 and body["ok"]
    assert took >= 0.4
    assert refused[0] == 404  # a refusal comes back across the same network
