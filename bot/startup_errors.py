"""What an operator is told when ``niuniu-bot run`` or ``niuniu-bot db upgrade`` fails:
one line that names what to fix, instead of a traceback, and never the token.

``explain`` is the one place that maps a failure to that line. It looks through the
chain of causes (SQLAlchemy wraps the driver's error, Alembic's, PTB's wrap httpx's) for
what went wrong, and words it for the part of the configuration to fix: the token, the
Bot API URL, or the database URL's host, port, user, password or name. A failure it does
not know is left to ``unexpected``: the traceback, with every secret blanked.
"""

from __future__ import annotations

import errno
import traceback

from bot.config import Config
from bot.failures import causes
from bot.store.failures import explain_database, is_database_failure, password_of
from bot.telegram.failures import explain_telegram, is_telegram_failure
from bot.web.server import WebListenFailed

#: Where each setting is, as the lines name it.
TOKEN_SETTING = "NIUNIU_TELEGRAM_TOKEN or [telegram] token"
#: With several bots, the token refused is one of these.
TOKENS_SETTING = "NIUNIU_TELEGRAM_TOKEN and NIUNIU_TELEGRAM_TOKENS, or [telegram] token and tokens"
BASE_URL_SETTING = "NIUNIU_TELEGRAM_BASE_URL or [telegram] base_url"
DATABASE_SETTING = "NIUNIU_DATABASE_URL or [database] url"
REDACTED = "<redacted>"


def secrets_of(config: Config) -> list[str]:
    """What must never be shown: each token (whole, then its secret part alone, as a URL
    may encode the colon), the webhook's secret, the database password."""
    found = [part for token in config.tokens for part in (token, token.partition(":")[2])]
    found.append(config.webhook.secret_token)
    found.append(password_of(config.database_url) or "")
    return [secret for secret in found if secret]


def redact(text: str, config: Config) -> str:
    """``text`` with every secret of ``config`` blanked."""
    for secret in secrets_of(config):
        text = text.replace(secret, REDACTED)
    return text


def explain(error: BaseException, config: Config) -> str | None:
    """The line that tells the operator what to fix, or None for a failure not known here.

    The line never holds a secret of ``config`` (``redact``)."""
    chain = list(causes(error))
    line: str | None = None
    if is_telegram_failure(chain):
        setting = TOKENS_SETTING if len(config.tokens) > 1 else TOKEN_SETTING
        line = explain_telegram(chain, config.telegram_base_url, setting, BASE_URL_SETTING)
    elif is_database_failure(chain):
        line = explain_database(chain, config.database_url, DATABASE_SETTING)
    elif isinstance(error, WebListenFailed):
        line = (
            f"cannot listen for the web server on {config.web.listen} "
            f"({(error.strerror or '').lower()}): fix [web] listen or NIUNIU_WEB_LISTEN"
        )
    elif config.mode == "webhook" and isinstance(error, OSError):
        line = _listening(error, config)
    return None if line is None else redact(line, config)


def unexpected(error: BaseException, config: Config) -> str:
    """The traceback of a failure ``explain`` does not know, every secret blanked."""
    return redact("".join(traceback.format_exception(error)), config)


def _listening(error: OSError, config: Config) -> str | None:
    if error.errno not in (errno.EADDRINUSE, errno.EACCES, errno.EADDRNOTAVAIL):
        return None
    webhook = config.webhook
    return (
        f"cannot listen for Telegram's webhook on {webhook.listen}:{webhook.port} "
        f"({(error.strerror or '').lower()}): fix [telegram.webhook] listen or port"
    )
