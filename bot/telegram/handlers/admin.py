"""Admins' commands: /open, /close, /serve, /config, /set, /credit, /debit, /fund, /ledger,
/audit. Each checks the sender first (``AdminCheck``); the service writes the audit log."""

from __future__ import annotations

import html
from typing import Any

from telegram import Update

from bot.engine.errors import GameError
from bot.engine.settings import SETTING_NAMES
from bot.money import format_bps, format_signed
from bot.service.game import Person, UnconfirmedChange
from bot.telegram.group_bots import ServedGroups
from bot.telegram.handlers.base import ShellParts, already_done, amount_argument
from bot.telegram.lookups import person_of
from bot.telegram.parsing import looks_like_number, parse_typed_amount, parse_user_id
from bot.telegram.views import display_name

#: Lines of ``/ledger`` and ``/audit``.
STATEMENT_LINES = 15
#: The last word of a ``/set`` that makes a change needing confirmation anyway.
CONFIRM = "confirm"


class AdminHandlers:
    """Opening the table, settings, chips, and what admins did."""

    def __init__(self, parts: ShellParts, served: ServedGroups) -> None:
        self.parts = parts
        self.served = served
        self.service = parts.service
        self.reply = parts.replies.reply
        self.chats = parts.chats

    async def open(self, update: Update, context: Any) -> None:
        """``/open``: open the table."""
        await self._set_open(update, True)

    async def close(self, update: Update, context: Any) -> None:
        """``/close``: close the table; a running round finishes."""
        await self._set_open(update, False)

    async def _set_open(self, update: Update, is_open: bool) -> None:
        chat_id, person = await self.parts.admins.require(update)
        changed = await self.service.set_open(chat_id, person, is_open, update_id=update.update_id)
        if changed is None:
            already_done(self.parts, update)
            return
        keys = {
            True: ("table.opened", "table.already_open"),
            False: ("table.closed", "table.already_closed"),
        }[is_open]
        self.reply(update, await self.chats.text(chat_id, keys[0] if changed else keys[1]))

    async def serve(self, update: Update, context: Any) -> None:
        """``/serve``: this bot serves the group from now on (``docs/operator.md``,
        "Several bots"), between rounds."""
        chat_id, person = await self.parts.admins.require(update)
        moved = await self.service.serve_here(chat_id, person, update_id=update.update_id)
        if moved is None:
            already_done(self.parts, update)
            return
        self.served.moved_here(chat_id)
        self.reply(
            update, await self.chats.text(chat_id, "serve.moved" if moved else "serve.already")
        )

    async def config(self, update: Update, context: Any) -> None:
        """``/config``: every setting of this group."""
        chat_id, _ = await self.parts.admins.require(update)
        views = await self.chats.views(chat_id)
        settings = views.settings
        lines = [views.t("config.header")]
        lines += [
            views.t("config.line", name=name, value=html.escape(settings.display(name)))
            for name in SETTING_NAMES
        ]
        lines.append(views.t("config.usage"))
        self.reply(update, "\n".join(lines))

    async def set(self, update: Update, context: Any) -> None:
        """``/set KEY VALUE [confirm]``: change a setting. A change that moves the house's
        edge out of bounds is answered with the odds it would give and made only when
        repeated with ``confirm``."""
        chat_id, person = await self.parts.admins.require(update)
        args: list[str] = context.args or []
        confirmed = len(args) > 2 and args[-1].lower() == CONFIRM
        if confirmed:
            args = args[:-1]
        if len(args) < 2:
            self.reply(update, await self.chats.text(chat_id, "set.usage"))
            return
        changed = await self.service.change_setting(
            chat_id,
            person,
            args[0],
            " ".join(args[1:]),
            update_id=update.update_id,
            confirmed=confirmed,
        )
        if changed is None:
            already_done(self.parts, update)
            return
        if isinstance(changed, UnconfirmedChange):
            views = await self.chats.views(chat_id)
            warning = views.edge_warning(
                changed.name, changed.value, changed.settings, changed.warning
            )
            self.reply(update, warning)
            return
        self.chats.forget(chat_id)
        name, old, new = changed
        views = await self.chats.views(chat_id)
        if old == new:
            self.reply(update, views.t("set.unchanged", name=name, value=html.escape(new)))
            return
        lines = [views.t("set.done", name=name, old=html.escape(old), new=html.escape(new))]
        if name == "ruleset" and old != new:
            settings = views.settings
            lines.append(
                views.t(
                    "set.table_defaults",
                    rake=format_bps(settings.rake_bps),
                    rebate=format_bps(settings.rebate_bps),
                    fees=settings.dealer_fees,
                    minimum=settings.min_bet,
                    maximum=settings.max_bet,
                )
            )
        if name in ("ruleset", "dealer") and await self.service.current_round(chat_id):
            lines.append(views.t("set.next_round"))
        self.reply(update, "\n".join(lines))

    async def _target(
        self, update: Update, args: list[str], *, with_amount: bool = True
    ) -> tuple[Person, list[str]]:
        """Whose chips: the replied-to user, an @username the bot has seen, or a user id."""
        message = update.effective_message
        replied = message.reply_to_message if message is not None else None
        if (
            message is not None
            and message.is_topic_message
            and replied is not None
            and (replied.message_id == message.message_thread_id)
        ):
            replied = None  # in a forum, every message "replies" to its topic's first one
        if replied is not None and replied.from_user is not None and not replied.from_user.is_bot:
            target = person_of(replied.from_user)
            self.parts.people.saw(target)
            return target, args
        if args and args[0].startswith("@"):
            found = await self.service.find_user(args[0])
            if found is None:
                raise GameError("unknown_user", who=args[0][:40])
            return found, args[1:]
        if args and looks_like_number(args[0]) and (len(args) >= 2 or not with_amount):
            user_id = parse_user_id(args[0])
            known = await self.parts.people.names([user_id])
            return known.get(user_id, Person(user_id)), args[1:]
        raise GameError("no_target")

    async def credit(self, update: Update, context: Any) -> None:
        """``/credit AMOUNT`` (as a reply, or with @username or an id): give chips."""
        await self._transfer(update, context, credit=True)

    async def debit(self, update: Update, context: Any) -> None:
        """``/debit AMOUNT``: take available chips back."""
        await self._transfer(update, context, credit=False)

    async def _transfer(self, update: Update, context: Any, *, credit: bool) -> None:
        chat_id, person = await self.parts.admins.require(update)
        target, rest = await self._target(update, list(context.args or []))
        if not rest:
            raise GameError("amount_missing", example="/credit 100")
        amount = parse_typed_amount(rest[0])
        action = self.service.credit if credit else self.service.debit
        balance = await action(chat_id, person, target.id, amount, update_id=update.update_id)
        if balance is None:
            already_done(self.parts, update)
            return
        text = await self.chats.text(
            chat_id,
            "credit.done" if credit else "debit.done",
            amount=amount,
            name=display_name(target.id, {target.id: target}),
            available=balance.available,
        )
        self.reply(update, text)

    async def fund(self, update: Update, context: Any) -> None:
        """``/fund AMOUNT``: move chips from the mint into the group's bank."""
        chat_id, person = await self.parts.admins.require(update)
        amount = amount_argument(context, "/fund 1000")
        balance = await self.service.fund(chat_id, person, amount, update_id=update.update_id)
        if balance is None:
            already_done(self.parts, update)
            return
        text = await self.chats.text(chat_id, "fund.done", amount=amount, balance=balance)
        self.reply(update, text)

    async def ledger(self, update: Update, context: Any) -> None:
        """``/ledger``: a player's statement (as a reply, @username or id; else your own)."""
        chat_id, person = await self.parts.admins.require(update)
        args = list(context.args or [])
        message = update.effective_message
        if args or (message is not None and message.reply_to_message is not None):
            target, _ = await self._target(update, args, with_amount=False)
        else:
            target = person
        views = await self.chats.views(chat_id)
        name = display_name(target.id, {target.id: target})
        lines = await self.service.statement(chat_id, target.id, limit=STATEMENT_LINES)
        if not lines:
            self.reply(update, views.t("ledger.none", name=name))
            return
        text = [views.t("ledger.header", name=name)]
        text += [
            views.t(
                "ledger.line",
                transaction_id=line.transaction_id,
                kind=line.kind,
                round=f" #{line.round_id}" if line.round_id else "",
                change=format_signed(line.change, views.currency),
            )
            for line in lines
        ]
        self.reply(update, "\n".join(text))

    async def audit(self, update: Update, context: Any) -> None:
        """``/audit``: recent admin actions."""
        chat_id, _ = await self.parts.admins.require(update)
        views = await self.chats.views(chat_id)
        entries = await self.service.audit_log(chat_id, limit=STATEMENT_LINES)
        if not entries:
            self.reply(update, views.t("audit.none"))
            return
        people = await self.parts.people.names(entry.actor_id for entry in entries)
        lines = [views.t("audit.header")]
        for entry in entries:
            details = ", ".join(f"{key}={value}" for key, value in entry.details.items())
            lines.append(
                views.t(
                    "audit.line",
                    who=display_name(entry.actor_id, people),
                    action=entry.action,
                    details=html.escape(details),
                )
            )
        self.reply(update, "\n".join(lines))
