"""A Mini App page's sign-in: fresh ``initData`` exchanged for a session token.

The page presents the token with every request (``Authorization: Bearer``; the live
feed, which a browser opens without headers, takes it as ``?token=``). It says who the
user is and until when, signed with a key of the Mini App's own
(``SessionSigner(purpose="niuniu-miniapp")``), so a console cookie is no Mini App
token, nor the reverse.

With several bots in the process, a page signs in with ``initData`` signed by any of them,
and its token says which (it is signed with that bot's key).
"""

from __future__ import annotations

from dataclasses import dataclass

from bot.web.miniapp.init_data import MiniAppUser, check_init_data
from bot.web.signing import Session, SessionSigner, SignatureRefused

#: How long a page stays signed in: as long as a player keeps a table open.
SESSION_SECONDS = 12 * 60 * 60


@dataclass(frozen=True, slots=True)
class SignedIn:
    """A page just signed in: who, and the token it presents from now on."""

    user: MiniAppUser
    session: Session
    token: str
    #: The bot whose token signed the ``initData``: its place in the tokens given.
    bot: int


class MiniAppSessions:
    """Signs pages in with ``initData`` signed by one of the bots of ``bot_tokens`` and
    checks their tokens (times in whole seconds since the epoch, given by the caller)."""

    def __init__(self, *bot_tokens: str) -> None:
        if not bot_tokens:
            raise ValueError("the Mini App needs a bot's token")
        self._bots = [
            (bot_token, SessionSigner(bot_token, purpose="niuniu-miniapp", seconds=SESSION_SECONDS))
            for bot_token in bot_tokens
        ]

    def sign_in(self, init_data: str, now: int) -> SignedIn:
        """A session for the user of fresh ``initData`` signed by one of the bots;
        ``SignatureRefused`` otherwise."""
        for bot, (bot_token, signer) in enumerate(self._bots):
            try:
                user = check_init_data(bot_token, init_data, now)
            except SignatureRefused as error:
                if error.reason == "signature":
                    continue  # another bot's, perhaps
                raise
            session, token = signer.issue(user.user_id, now)
            return SignedIn(user, session, token, bot)
        raise SignatureRefused("signature")

    def check(self, token: str, now: int) -> tuple[Session, int]:
        """The session of a token issued here and not expired, and the bot it was issued
        for; ``SignatureRefused`` otherwise."""
        for bot, (_, signer) in enumerate(self._bots):
            try:
                return signer.check(token, now), bot
            except SignatureRefused as error:
                if error.reason != "signature":
                    raise
        raise SignatureRefused("signature")
