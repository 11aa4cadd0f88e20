"""The web layer: the operator console (``bot.web.console``) and, beside it, the health and
metrics endpoints. Below the Telegram shell, above the service; no SQL here."""
