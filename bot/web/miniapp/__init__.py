"""The Mini App: a table of the group's game inside the Telegram client (docs/miniapp.md)."""
