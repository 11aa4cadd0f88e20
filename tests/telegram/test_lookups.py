"""ChatSettings and People: what the shell looks up again and again, cached briefly and
bounded, over the service."""

from __future__ import annotations

import asyncio

import pytest
from cachetools import Cache
from telegram import User

from bot.engine.settings import Settings
from bot.service.game import Person
from bot.telegram import lookups
from bot.telegram.i18n import translate
from bot.telegram.lookups import ChatSettings, People, person_of
from tests.helpers.telegram import GROUP, OTHER_GROUP, FakeService, message_update, person

ANN, BOB, CAT = Person(11, "Ann", "ann"), Person(12, "Bob"), Person(13, "Cat")


@pytest.fixture
def service() -> FakeService:
    service = FakeService()
    service.chat_settings = {GROUP: Settings(language="zh", currency="$")}
    service.people = {p.id: p for p in (ANN, BOB, CAT)}
    return service


def reads(service: FakeService, name: str) -> list[object]:
    return [call.args[0] for call in service.called(name)]


# -- ChatSettings -------------------------------------------------------------------------


async def test_a_groups_settings_are_read_once_and_reused(service: FakeService) -> None:
    chats = ChatSettings(service)

    assert (await chats.get(GROUP)).language == "zh"
    await chats.get(GROUP)
    await chats.get(OTHER_GROUP)

    assert reads(service, "settings") == [GROUP, OTHER_GROUP]


async def test_settings_changed_here_are_read_again_at_once(service: FakeService) -> None:
    chats = ChatSettings(service)
    await chats.get(GROUP)
    service.chat_settings[GROUP] = Settings(language="en")

    chats.forget(GROUP)

    assert (await chats.get(GROUP)).language == "en"
    assert reads(service, "settings") == [GROUP, GROUP]


async def test_settings_changed_elsewhere_are_read_again_once_the_cache_is_stale(
    service: FakeService,
) -> None:
    chats = ChatSettings(service, seconds=0.01)
    await chats.get(GROUP)

    await asyncio.sleep(0.02)
    await chats.get(GROUP)

    assert reads(service, "settings") == [GROUP, GROUP]


async def test_settings_are_kept_for_a_bounded_number_of_groups(
    service: FakeService, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(lookups, "SETTINGS_CACHED", 2)
    chats = ChatSettings(service)

    for chat_id in (-1, -2, -3):
        await chats.get(chat_id)

    assert len(chats) == 2


async def test_texts_and_views_are_in_the_groups_language_and_currency(
    service: FakeService,
) -> None:
    chats = ChatSettings(service)

    text = await chats.text(GROUP, "error.bet_too_small", minimum=150)
    views = await chats.views(GROUP)

    assert text == translate("zh", "error.bet_too_small", "$", minimum=150)
    assert text != translate("en", "error.bet_too_small", "RM", minimum=150)
    assert views.money(150) == "$1.50"


# -- People -------------------------------------------------------------------------------


async def test_names_seen_lately_need_no_lookup(service: FakeService) -> None:
    people = People(service)
    fresh = Person(11, "Annie", "ann")  # Telegram shows a newer name than the database's

    people.saw(fresh)

    assert await people.names([11]) == {11: fresh}
    assert service.called("names") == []


async def test_only_names_not_known_are_asked_for_each_once(service: FakeService) -> None:
    people = People(service)
    people.saw(ANN)

    found = await people.names([12, 11, 12, 99, 13])
    again = await people.names([13, 12])

    assert found == {12: BOB, 11: ANN, 13: CAT}  # 99 is unknown: left out
    assert list(found) == [12, 11, 13]
    assert again == {13: CAT, 12: BOB}
    assert reads(service, "names") == [[12, 99, 13]]


async def test_names_are_kept_for_a_bounded_number_of_people(service: FakeService) -> None:
    people = People(service, size=2)

    for someone in (ANN, BOB, CAT):
        people.saw(someone)

    assert len(people) == 2
    assert await people.names([11]) == {11: ANN}  # the least recent, asked again
    assert reads(service, "names") == [[11]]


async def test_names_of_people_gone_quiet_are_forgotten_without_another_write(
    service: FakeService,
) -> None:
    now = [0.0]
    people = People(service, timer=lambda: now[0])
    people.saw(ANN)
    now[0] = lookups.NAMES_CACHE_SECONDS / 2
    people.saw(BOB)

    now[0] = lookups.NAMES_CACHE_SECONDS + 1
    held = people._cache
    assert Cache.__len__(held) == 2  # a cache drops what ran out only when touched
    people.forget_quiet()

    assert Cache.__len__(held) == 1
    assert await people.names([12]) == {12: BOB}
    assert service.called("names") == []


def test_a_telegram_user_is_a_person_for_the_service() -> None:
    user = person(11, "Ann", username="ann")

    assert person_of(user) == Person(11, "Ann", "ann", None)


async def test_those_who_ask_while_the_settings_are_read_wait_for_that_one_read(
    service: FakeService,
) -> None:
    chats = ChatSettings(service)

    found = await asyncio.gather(*(chats.get(GROUP) for _ in range(5)))

    assert [settings.language for settings in found] == ["zh"] * 5
    assert reads(service, "settings") == [GROUP]


async def test_settings_forgotten_while_being_read_are_read_again(service: FakeService) -> None:
    chats = ChatSettings(service)
    first = asyncio.ensure_future(chats.get(GROUP))
    await asyncio.sleep(0)  # the read is on its way
    chats.forget(GROUP)  # a change was made meanwhile
    await first

    await chats.get(GROUP)

    assert reads(service, "settings") == [GROUP, GROUP]


# -- answering without the database ---------------------------------------------------------


async def test_a_groups_language_is_remembered_past_its_settings_time(
    service: FakeService, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Read once, then the settings' time runs out and the database is unreachable: the
    # group is still answered in its own language.
    chats = ChatSettings(service, seconds=0.0)
    await chats.get(GROUP)
    key = "error.database_unavailable"

    group = message_update(GROUP, person(5, "Eko"), "/bet 5").effective_chat
    assert group is not None
    english_user = person(5, "Eko")
    assert chats.text_offline(group, english_user, key) == translate("zh", key)
    assert not reads(service, "settings")[1:]  # asked nothing more of the service


def test_a_group_never_read_is_answered_in_the_users_language(service: FakeService) -> None:
    chats = ChatSettings(service)
    key = "error.database_unavailable"
    chinese = User(5, "Eko", False, language_code="zh-hans")
    english = User(6, "Ann", False, language_code="en")
    group = message_update(OTHER_GROUP, chinese, "/bet 5").effective_chat
    assert group is not None

    assert chats.text_offline(group, chinese, key) == translate("zh", key)
    assert chats.text_offline(group, english, key) == translate("en", key)
    assert chats.text_offline(group, None, key) == translate("en", key)
    assert service.called("settings") == []


async def test_a_private_chat_follows_the_users_language_not_a_groups(
    service: FakeService,
) -> None:
    chats = ChatSettings(service)
    english = User(11, "Ann", False, language_code="en")
    private = message_update(11, english, "/balance").effective_chat
    assert private is not None

    assert chats.text_offline(private, english, "error.internal") == translate(
        "en", "error.internal"
    )
