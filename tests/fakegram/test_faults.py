"""Fault injection: each fault over real HTTP, to a plain aiohttp client and to
python-telegram-bot's ``Bot`` on either transport (its own httpx one and the bot's)."""

import asyncio
import datetime as dtm
import re
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest
from telegram import Bot, InlineKeyboardButton, InlineKeyboardMarkup
from telegram.error import NetworkError, RetryAfter, TelegramError, TimedOut
from telegram.request import HTTPXRequest

from bot.fakegram import FakeTelegram, FakeTelegramClient, FaultMix
from bot.fakegram.faults import FAULT_KINDS
from bot.telegram.http import BotApiRequest
from tests.fakegram.sample import ALICE, GROUP_ID

NO_FAULTS: dict[str, dict[str, int]] = {kind: {} for kind in FAULT_KINDS}


@pytest.fixture(params=["httpx", "BotApiRequest"])
async def any_bot(request: pytest.FixtureRequest, fake: FakeTelegram) -> AsyncIterator[Bot]:
    """python-telegram-bot's ``Bot`` on its own transport, and as the bot builds it."""
    make = HTTPXRequest if request.param == "httpx" else BotApiRequest
    async with Bot(
        fake.token, base_url=fake.base_url, request=make(), get_updates_request=make()
    ) as ptb_bot:
        yield ptb_bot


async def raw_send(
    fake: FakeTelegram, text: str = "hi", **timeout: float
) -> aiohttp.ClientResponse:
    """POST a sendMessage without python-telegram-bot; the response, its body read."""
    async with (
        aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(**timeout)) as session,
        session.post(
            f"{fake.base_url}{fake.token}/sendMessage", json={"chat_id": GROUP_ID, "text": text}
        ) as response,
    ):
        await response.read()
        return response


async def control_post(fake: FakeTelegram, path: str, body: Any) -> tuple[int, Any]:
    """POST JSON to a control endpoint; returns (HTTP status, JSON body)."""
    async with (
        aiohttp.ClientSession() as session,
        session.post(f"{fake.root_url}{path}", json=body) as response,
    ):
        return response.status, await response.json()


def sent_texts(fake: FakeTelegram) -> list[str]:
    return [entry["plain_text"] for entry in fake.transcript(GROUP_ID) if entry["kind"] == "send"]


def send_calls(fake: FakeTelegram) -> list[dict[str, Any]]:
    """The sendMessage requests the fake answered."""
    return [call for call in fake.calls if call["method"] == "sendMessage"]


# ------------------------------------------------------------------ retry_after


async def test_retry_after_answers_429_and_sends_nothing(fake: FakeTelegram) -> None:
    fake.set_faults(FaultMix(retry_after=1, retry_after_seconds=(3, 3)))

    response = await raw_send(fake)

    assert response.status == 429
    assert await response.json() == {
        "ok": False,
        "error_code": 429,
        "description": "Too Many Requests: retry after 3",
        "parameters": {"retry_after": 3},
    }
    assert sent_texts(fake) == []
    assert fake.faults_injected == {**NO_FAULTS, "retry_after": {"sendMessage": 1}}


async def test_retry_after_is_seen_as_retry_after_with_its_seconds(
    fake: FakeTelegram, any_bot: Bot, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PTB_TIMEDELTA", "true")  # PTB 23's retry_after type, no deprecation
    fake.set_faults(FaultMix(retry_after=1, retry_after_seconds=(2, 4), seed=3))

    seen = []
    for _ in range(12):
        with pytest.raises(RetryAfter) as raised:
            await any_bot.send_message(GROUP_ID, "hi")
        assert isinstance(raised.value.retry_after, dtm.timedelta)
        seen.append(int(raised.value.retry_after.total_seconds()))

    assert set(seen) == {2, 3, 4}
    assert sent_texts(fake) == []
    assert [call["error_code"] for call in send_calls(fake)] == [429] * 12


async def test_a_refused_toast_can_be_given_again(
    fake: FakeTelegram, bot: Bot, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PTB_TIMEDELTA", "true")
    keyboard = InlineKeyboardMarkup([[InlineKeyboardButton("Grab", callback_data="grab")]])
    board = await bot.send_message(GROUP_ID, "Round 1", reply_markup=keyboard)
    query_id = fake.press_button(GROUP_ID, board.message_id, ALICE, "grab")["callback_query"]["id"]
    fake.set_faults(FaultMix(retry_after=1))

    with pytest.raises(RetryAfter):
        await bot.answer_callback_query(query_id, text="Got it")
    assert fake.callback_answers == []

    fake.set_faults(None)
    assert await bot.answer_callback_query(query_id, text="Got it")
    assert [answer["text"] for answer in fake.callback_answers] == ["Got it"]


# ------------------------------------------------------------------ bad_gateway


async def test_bad_gateway_is_an_html_502_and_sends_nothing(fake: FakeTelegram) -> None:
    fake.set_faults(FaultMix(bad_gateway=1))

    response = await raw_send(fake)

    assert response.status == 502
    assert response.content_type == "text/html"
    body = await response.text()
    assert body.startswith("<html>")
    assert "<title>502 Bad Gateway</title>" in body
    assert sent_texts(fake) == []
    assert send_calls(fake) == []
    assert fake.faults_injected["bad_gateway"] == {"sendMessage": 1}


async def test_bad_gateway_is_a_network_error(fake: FakeTelegram, any_bot: Bot) -> None:
    fake.set_faults(FaultMix(bad_gateway=1))

    with pytest.raises(NetworkError) as raised:
        await any_bot.send_message(GROUP_ID, "hi")

    assert isinstance(raised.value, TelegramError)
    assert "Bad Gateway" in str(raised.value)
    assert sent_texts(fake) == []
    assert fake.messages(GROUP_ID) == {}


# ------------------------------------------------------------------ late_answer


def test_a_late_answer_comes_after_the_bots_read_timeout() -> None:
    late = FaultMix().late_answer_seconds

    for transport in (BotApiRequest(), HTTPXRequest()):
        assert transport.read_timeout is not None
        assert late > transport.read_timeout


async def test_a_late_answer_times_out_though_the_message_is_sent(
    fake: FakeTelegram, any_bot: Bot
) -> None:
    fake.set_faults(FaultMix(late_answer=1, late_answer_seconds=2.0))

    with pytest.raises(TimedOut):
        await any_bot.send_message(GROUP_ID, "late", read_timeout=0.2)

    assert sent_texts(fake) == ["late"]
    assert list(fake.messages(GROUP_ID)) == [1]
    assert [call["ok"] for call in send_calls(fake)] == [True]
    assert fake.faults_injected["late_answer"] == {"sendMessage": 1}


async def test_a_late_answer_times_out_a_plain_client(fake: FakeTelegram) -> None:
    fake.set_faults(FaultMix(late_answer=1, late_answer_seconds=2.0))

    with pytest.raises(TimeoutError):
        await raw_send(fake, "late", sock_read=0.2)

    assert sent_texts(fake) == ["late"]


async def test_a_late_answer_still_comes_to_a_patient_client(fake: FakeTelegram) -> None:
    fake.set_faults(FaultMix(late_answer=1, late_answer_seconds=0.1))

    response = await raw_send(fake, "late")

    assert response.status == 200
    assert (await response.json())["result"]["message_id"] == 1
    assert sent_texts(fake) == ["late"]


async def test_stopping_lets_a_held_answer_go() -> None:
    fake = FakeTelegram()
    await fake.start()
    fake.set_faults(FaultMix(late_answer=1, late_answer_seconds=60))
    sending = asyncio.create_task(raw_send(fake, "late"))
    await fake.wait_for(lambda: sent_texts(fake))

    await asyncio.wait_for(fake.stop(), timeout=5)

    assert (await asyncio.wait_for(sending, timeout=5)).status == 200


# ------------------------------------------------------------------------ reset


async def test_reset_closes_the_connection_and_sends_nothing(fake: FakeTelegram) -> None:
    fake.set_faults(FaultMix(reset=1))

    with pytest.raises(aiohttp.ClientConnectionError):
        await raw_send(fake)

    assert sent_texts(fake) == []
    assert send_calls(fake) == []
    assert fake.faults_injected["reset"] == {"sendMessage": 1}


async def test_reset_is_a_network_error(fake: FakeTelegram, any_bot: Bot) -> None:
    fake.set_faults(FaultMix(reset=1))

    with pytest.raises(NetworkError) as raised:
        await any_bot.send_message(GROUP_ID, "hi")

    assert not isinstance(raised.value, TimedOut)
    assert sent_texts(fake) == []
    fake.set_faults(None)
    assert (await any_bot.send_message(GROUP_ID, "after")).message_id == 1


# ----------------------------------------------------------------------- outage


async def wait_out(fake: FakeTelegram) -> None:
    while fake.in_outage:
        await asyncio.sleep(0.05)


async def test_an_outage_refuses_everything_then_ends(fake: FakeTelegram, any_bot: Bot) -> None:
    fake.post_message(GROUP_ID, ALICE, "/newround")
    fake.outage(0.3)

    assert fake.in_outage
    with pytest.raises(NetworkError):
        await any_bot.get_updates()
    with pytest.raises(NetworkError):
        await any_bot.get_me()
    with pytest.raises(NetworkError):
        await any_bot.send_message(GROUP_ID, "hi")
    assert sent_texts(fake) == []
    assert fake.faults_injected["outage"] == {"getUpdates": 1, "getMe": 1, "sendMessage": 1}

    await asyncio.wait_for(wait_out(fake), timeout=5)
    [update] = await any_bot.get_updates()
    assert update.message is not None and update.message.text == "/newround"
    assert (await any_bot.send_message(GROUP_ID, "back")).message_id == 2


async def test_an_outage_cuts_off_a_waiting_long_poll(fake: FakeTelegram, any_bot: Bot) -> None:
    polling = asyncio.create_task(any_bot.get_updates(timeout=10))
    await fake.wait_for(lambda: fake.is_polling)

    fake.outage(0.3)
    fake.post_message(GROUP_ID, ALICE, "/newround")

    with pytest.raises(NetworkError):
        await asyncio.wait_for(polling, timeout=5)
    assert fake.faults_injected["outage"] == {"getUpdates": 1}
    await asyncio.wait_for(wait_out(fake), timeout=5)
    [update] = await any_bot.get_updates()
    assert update.message is not None and update.message.text == "/newround"


async def test_an_outage_needs_seconds(fake: FakeTelegram) -> None:
    for seconds in (0, -1, float("inf"), "5"):
        with pytest.raises(ValueError, match="seconds must be more than 0"):
            fake.outage(seconds)  # type: ignore[arg-type]
    assert not fake.in_outage


# ---------------------------------------------------------------- methods, rates


async def test_start_up_calls_are_spared_by_default(fake: FakeTelegram, bot: Bot) -> None:
    fake.set_faults(FaultMix(reset=1))

    assert (await bot.get_me()).username == "niuniu_test_bot"
    assert await bot.get_updates() == ()
    assert await bot.delete_webhook()
    assert await bot.get_my_commands() == ()
    for call in (
        lambda: bot.send_message(GROUP_ID, "hi"),
        lambda: bot.get_chat_member(GROUP_ID, ALICE["id"]),
        lambda: bot.answer_callback_query("1"),
        lambda: bot.delete_message(GROUP_ID, 1),
    ):
        with pytest.raises(NetworkError):
            await call()
    assert fake.faults_injected["reset"] == {
        "sendMessage": 1,
        "getChatMember": 1,
        "answerCallbackQuery": 1,
        "deleteMessage": 1,
    }


async def test_the_methods_struck_can_be_named(fake: FakeTelegram, bot: Bot) -> None:
    fake.set_faults(FaultMix(bad_gateway=1, methods=frozenset({"getchatmember", "getMe"})))

    assert (await bot.send_message(GROUP_ID, "hi")).message_id == 1
    with pytest.raises(NetworkError):
        await bot.get_chat_member(GROUP_ID, ALICE["id"])
    with pytest.raises(NetworkError):
        await bot.get_me()
    assert fake.faults_injected["bad_gateway"] == {"getChatMember": 1, "getMe": 1}

    with pytest.raises(ValueError, match="the fake serves no method 'sendTelepathy'"):
        fake.set_faults(FaultMix(reset=1, methods=frozenset({"sendTelepathy"})))
    assert fake.faults is not None and fake.faults.bad_gateway == 1


MIXED = FaultMix(
    retry_after=0.2, bad_gateway=0.1, late_answer=0.1, late_answer_seconds=0.01, reset=0.05
)


async def outcomes(fake: FakeTelegram, calls: int) -> list[str]:
    """What each of ``calls`` getChatMember requests met, in order."""
    seen = []
    async with aiohttp.ClientSession() as session:
        for _ in range(calls):
            url = f"{fake.base_url}{fake.token}/getChatMember"
            try:
                async with session.post(
                    url, json={"chat_id": GROUP_ID, "user_id": ALICE["id"]}
                ) as response:
                    seen.append(str(response.status))
            except aiohttp.ClientConnectionError:
                seen.append("reset")
    return seen


async def test_rates_are_honoured(fake: FakeTelegram) -> None:
    fake.set_faults(MIXED)

    seen = await outcomes(fake, 400)

    injected = fake.faults_injected
    assert 50 <= seen.count("429") <= 110  # 80 expected
    assert 20 <= seen.count("502") <= 60  # 40 expected
    assert 5 <= seen.count("reset") <= 35  # 20 expected
    assert 20 <= injected["late_answer"]["getChatMember"] <= 60  # 40 expected
    assert injected["retry_after"] == {"getChatMember": seen.count("429")}
    assert injected["bad_gateway"] == {"getChatMember": seen.count("502")}
    assert injected["reset"] == {"getChatMember": seen.count("reset")}
    assert seen.count("200") == 400 - sum(seen.count(kind) for kind in ("429", "502", "reset"))


async def test_a_seed_repeats_its_faults(fake: FakeTelegram) -> None:
    fake.set_faults(MIXED)
    first = await outcomes(fake, 60)
    fake.set_faults(MIXED)
    again = await outcomes(fake, 60)
    fake.set_faults(FaultMix(**{**MIXED.__dict__, "seed": 1}))
    other_seed = await outcomes(fake, 60)

    assert first == again
    assert other_seed != first
    assert len(set(first)) == 4


# ------------------------------------------------------------------ the mix


@pytest.mark.parametrize(
    ("mix", "reason"),
    [
        ({"retry_after": 1.5}, "retry_after must be a rate from 0 to 1, got 1.5"),
        ({"reset": -0.1}, "reset must be a rate from 0 to 1"),
        ({"bad_gateway": True}, "bad_gateway must be a rate from 0 to 1, got True"),
        ({"retry_after": 0.6, "reset": 0.6}, "the rates add up to 1.2, more than 1"),
        ({"retry_after_seconds": [0, 3]}, "retry_after_seconds must be two whole numbers"),
        ({"retry_after_seconds": [4, 2]}, "retry_after_seconds must be two whole numbers"),
        ({"retry_after_seconds": 3}, r"retry_after_seconds must be \[low, high\], got 3"),
        ({"late_answer_seconds": 0}, "late_answer_seconds must be more than 0, got 0"),
        ({"methods": "sendMessage"}, "methods must be a list of method names"),
        ({"methods": [1]}, "methods must be a set of method names"),
        ({"methods": ["sendTelepathy"]}, "the fake serves no method 'sendTelepathy'"),
        ({"seed": "x"}, "seed must be an integer, got 'x'"),
        ({"rest": 0.1}, "unknown field 'rest'; fields are retry_after, "),
        ([0.1], "the faults must be a JSON object or null"),
    ],
)
async def test_a_wrong_mix_is_refused_with_its_reason(
    fake: FakeTelegram, mix: Any, reason: str
) -> None:
    fake.set_faults(FaultMix(reset=0.5))

    status, body = await control_post(fake, "/_fake/faults", mix)

    assert status == 400
    assert re.search(reason, body["error"]), body
    assert fake.faults == FaultMix(reset=0.5)


async def test_the_mix_is_set_and_read_over_http(fake: FakeTelegram, bot: Bot) -> None:
    mix = FaultMix(
        retry_after=0.1,
        retry_after_seconds=(2, 5),
        bad_gateway=0.05,
        late_answer=0.03,
        late_answer_seconds=7.5,
        reset=0.02,
        methods=frozenset({"sendMessage", "editMessageText"}),
        seed=42,
    )
    async with FakeTelegramClient(fake.root_url) as client:
        await client.set_faults(mix)
        assert fake.faults == mix

        await client.set_faults(FaultMix(reset=1))
        with pytest.raises(NetworkError):
            await bot.send_message(GROUP_ID, "hi")
        assert await client.faults_injected() == {**NO_FAULTS, "reset": {"sendMessage": 1}}

        await client.set_faults(None)
        assert fake.faults is None
        assert (await bot.send_message(GROUP_ID, "hi")).message_id == 1
        assert await control_post(fake, "/_fake/faults", {"bad_gateway": 1}) == (200, None)
        assert fake.faults == FaultMix(bad_gateway=1)
        assert await control_post(fake, "/_fake/faults", {}) == (200, None)
        assert fake.faults is None
        # Counts outlive the mix that made them.
        assert (await client.faults_injected())["reset"] == {"sendMessage": 1}


async def test_an_outage_over_http(fake: FakeTelegram) -> None:
    assert await control_post(fake, "/_fake/outage", {}) == (
        400,
        {"error": "missing field 'seconds'"},
    )
    async with FakeTelegramClient(fake.root_url) as client:
        with pytest.raises(ValueError, match="seconds must be more than 0, got -2"):
            await client.outage(-2)
        assert not await client.in_outage()

        await client.outage(20)

        assert await client.in_outage()
        with pytest.raises(aiohttp.ClientConnectionError):
            await raw_send(fake)
        assert (await client.faults_injected())["outage"] == {"sendMessage": 1}
    async with (
        aiohttp.ClientSession() as session,
        session.get(f"{fake.root_url}/_fake/faults") as response,
    ):
        assert await response.json() == {
            "faults": None,
            "outage": True,
            "injected": {**NO_FAULTS, "outage": {"sendMessage": 1}},
        }
