"""The Mini App: a table of the group's game inside the Telegram client (docs/miniapp.md)."""

from bot.web.miniapp.app import build_miniapp as build_miniapp
