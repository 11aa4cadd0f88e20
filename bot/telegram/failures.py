"""Telegram's failures at start-up, worded for the operator: which setting to fix."""

from __future__ import annotations

from telegram.error import InvalidToken, NetworkError, TelegramError, TimedOut

from bot.failures import first_line, os_reason


def is_telegram_failure(chain: list[BaseException]) -> bool:
    """Whether a chain of causes holds a failure of the Bot API."""
    return any(isinstance(cause, TelegramError) for cause in chain)


def explain_telegram(
    chain: list[BaseException], base_url: str, token_setting: str, base_url_setting: str
) -> str:
    """The line for a Bot API failure (``chain``: the failure and its causes)."""
    refusals = [cause for cause in chain if isinstance(cause, InvalidToken)]
    if refusals:
        # The innermost one holds Telegram's answer; PTB's outer one holds the token.
        answer = first_line(refusals[-1])
        line = f"Telegram at {base_url} refused the bot token ({answer}): set {token_setting}"
        if answer == "Not Found":  # a malformed token, or a URL that is no Bot API
            line += f", and check {base_url_setting}"
        return line
    if any(isinstance(cause, TimedOut) for cause in chain):
        return (
            f"Telegram at {base_url} did not answer in time: check the network or "
            f"{base_url_setting}"
        )
    failure = next((cause for cause in chain if isinstance(cause, NetworkError)), None)
    if failure is not None:
        reason = os_reason(chain) or first_line(failure).removeprefix("httpx.")
        return (
            f"cannot reach Telegram at {base_url} ({reason}): check the network or "
            f"{base_url_setting}"
        )
    refusal = next(cause for cause in chain if isinstance(cause, TelegramError))
    return f"Telegram at {base_url} refused a request: {first_line(refusal)}"
