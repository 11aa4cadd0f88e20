"""``/set`` of a change that moves the house's edge out of bounds, through the bot's own
handlers over a real service: answered in the group's language with the odds the table
would have and how to confirm, nothing changed; repeated with ``confirm``, made."""

from __future__ import annotations

from types import SimpleNamespace

from telegram import ChatMember

from bot.service.game import GameService, Person
from bot.store.db import Database
from bot.telegram.i18n import translate
from tests.helpers.telegram import GROUP, message_update, person
from tests.helpers.telegram_shells import GameShell

ADA = person(31, "Ada")


class AdminChat:
    """An admin of ``GROUP`` typing commands to the shell."""

    def __init__(self, db: Database) -> None:
        self.shell = GameShell(GameService(db))
        self.shell.bot.statuses[(GROUP, ADA.id)] = ChatMember.ADMINISTRATOR
        self.service = self.shell.service

    async def say(self, text: str) -> str:
        """The bot's answer to ``text`` (an admin command)."""
        handlers = self.shell.game.admin
        handler = getattr(handlers, text.split()[0].removeprefix("/"))
        await handler(message_update(GROUP, ADA, text), SimpleNamespace(args=text.split()[1:]))
        return (await self.shell.sent())[-1]


async def poker_table(db: Database) -> AdminChat:
    chat = AdminChat(db)
    await chat.service.set_open(GROUP, Person(ADA.id, "Ada"), True)
    await chat.service.change_setting(GROUP, Person(ADA.id, "Ada"), "ruleset", "poker29")
    return chat


async def test_set_dealer_house_at_a_poker_table_shows_the_odds_and_waits_for_confirm(
    db: Database,
) -> None:
    chat = await poker_table(db)
    answer = await chat.say("/set dealer house")
    lines = answer.splitlines()
    assert lines[0] == translate("en", "set.edge_pays_out", percent="30.31%")
    assert translate("en", "odds.player", percent="+30.31%") in lines
    assert translate("en", "odds.dealer", percent="-30.31%") in lines
    assert lines[-1] == translate("en", "set.confirm", name="dealer", value="house")
    assert "<code>/set dealer house confirm</code>" in lines[-1]
    assert (await chat.service.settings(GROUP)).dealer == "bid"

    answer = await chat.say("/set dealer house CONFIRM")
    assert answer.splitlines()[0] == translate(
        "en", "set.done", name="dealer", old="bid", new="house"
    )
    assert (await chat.service.settings(GROUP)).dealer == "house"


async def test_a_change_that_needs_no_confirmation_is_made_with_or_without_it(
    db: Database,
) -> None:
    chat = await poker_table(db)
    done = translate("en", "set.done", name="loss_pays", old="player", new="dealer")
    assert (await chat.say("/set loss_pays dealer")).splitlines()[0] == done
    done = translate("en", "set.done", name="dealer", old="bid", new="house")
    assert (await chat.say("/set dealer house confirm")).splitlines()[0] == done
    # /rules says how a loss is paid at this table.
    rules = await chat.shell.game.chats.views(GROUP)
    assert translate("en", "rules.loss_pays_dealer", multiplier=5) in rules.rules()


async def test_the_warning_is_in_the_groups_language(db: Database) -> None:
    chat = AdminChat(db)
    await chat.service.set_open(GROUP, Person(ADA.id, "Ada"), True)
    await chat.say("/set language zh")
    answer = await chat.say("/set rake 6%")
    lines = answer.splitlines()
    assert lines[0] == translate("zh", "set.edge_takes_too_much", percent="43.38%", limit="20%")
    assert translate("zh", "odds.house", percent="+43.38%") in lines
    assert lines[-1] == translate("zh", "set.confirm", name="rake", value="6%")
    assert (await chat.service.settings(GROUP)).rake_bps == 500
    done = translate("zh", "set.done", name="rake", old="5%", new="6%")
    assert (await chat.say("/set rake 6% confirm")).splitlines()[0] == done
