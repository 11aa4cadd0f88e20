"""The bot's own HTTP server for its operator: health, readiness, Prometheus metrics and
the operator console (``bot.web.console``). Below the Telegram shell (which starts it) and
above the service (which it asks); it never imports python-telegram-bot, and holds no SQL."""
