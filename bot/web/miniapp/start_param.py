"""The group a Mini App link opens, as the link's ``startapp`` carries it.

Telegram passes ``startapp`` to the app as ``start_param`` (in the signed ``initData``)
and allows only ``A-Z a-z 0-9 _ -`` in it, up to 512 characters. A group's id is
negative: the link writes it as ``g`` and its digits (``-1001234567890`` is
``g1001234567890``), letters and digits only, which every client passes as it is. The
id itself (``-1001234567890``), which the first links pinned by hand carried, is read
too. Anything else names no group and is refused, never guessed at.
"""

from __future__ import annotations

import re

from bot.web.signing import USER_ID_LIMIT

#: How the bot's links write a group: ``g`` and the id's digits, ASCII only.
ENCODED = re.compile(r"g([1-9][0-9]{0,15})")
#: The id as it is: a minus and its digits, ASCII only.
PLAIN = re.compile(r"-[1-9][0-9]{0,15}")
#: Telegram's chat ids fit in 52 bits, as its user ids do.
GROUP_ID_LIMIT = USER_ID_LIMIT


class NoGroup(ValueError):
    """A ``start_param`` that names no group."""


def encode_group(chat_id: int) -> str:
    """A group's id as a link's ``startapp``."""
    if not -GROUP_ID_LIMIT < chat_id < 0:
        raise ValueError(f"{chat_id} is no group's id")
    return f"g{-chat_id}"


def decode_group(start_param: str) -> int:
    """The group a ``start_param`` names; ``NoGroup`` for anything ``encode_group`` does
    not make but a group's id as it is."""
    encoded = ENCODED.fullmatch(start_param)
    if encoded is not None:
        chat_id = -int(encoded.group(1))
    elif PLAIN.fullmatch(start_param) is not None:
        chat_id = int(start_param)
    else:
        raise NoGroup(start_param)
    if -chat_id >= GROUP_ID_LIMIT:
        raise NoGroup(start_param)
    return chat_id
