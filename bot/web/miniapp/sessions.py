"""A Mini App page's sign-in: fresh ``initData`` exchanged for a session token.

The page presents the token with every request (``Authorization: Bearer``; the live
feed, which a browser opens without headers, takes it as ``?token=``). It says who the
user is and until when, signed with a key of the Mini App's own
(``SessionSigner(purpose="niuniu-miniapp")``), so a console cookie is no Mini App
token, nor the reverse.
"""

from __future__ import annotations

from dataclasses import dataclass

from bot.web.miniapp.init_data import MiniAppUser, check_init_data
from bot.web.signing import Session, SessionSigner

#: How long a page stays signed in: as long as a player keeps a table open.
SESSION_SECONDS = 12 * 60 * 60


@dataclass(frozen=True, slots=True)
class SignedIn:
    """A page just signed in: who, and the token it presents from now on."""

    user: MiniAppUser
    session: Session
    token: str


class MiniAppSessions:
    """Signs pages in with ``initData`` and checks their tokens (times in whole seconds
    since the epoch, given by the caller)."""

    def __init__(self, bot_token: str) -> None:
        self._bot_token = bot_token
        self._signer = SessionSigner(bot_token, purpose="niuniu-miniapp", seconds=SESSION_SECONDS)

    def sign_in(self, init_data: str, now: int) -> SignedIn:
        """A session for the user of fresh, signed ``initData``; ``SignatureRefused``
        otherwise."""
        user = check_init_data(self._bot_token, init_data, now)
        session, token = self._signer.issue(user.user_id, now)
        return SignedIn(user, session, token)

    def check(self, token: str, now: int) -> Session:
        """The session of a token issued here and not expired; ``SignatureRefused``
        otherwise."""
        return self._signer.check(token, now)
