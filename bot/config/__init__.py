"""Configuration: one pydantic-settings model (``Config``, in ``bot.config.model``) read
from a TOML file (``--config`` or ``NIUNIU_CONFIG``) and ``NIUNIU_*`` environment
variables, which override the file (``load_config``, in ``bot.config.loading``).

Each field of ``Config`` says where it lives in the file (``In("bot", "sweep_seconds")``);
its variable is ``NIUNIU_`` and the field's name (``NIUNIU_MODE`` for ``mode``, which the
file keeps under ``[telegram]``), or ``NIUNIU_WEB_LISTEN`` for a key of a table
(``[web] listen``). Every value is checked at start-up, and a problem is one line that
names the key or the variable (``bot.config.problems``). The file's values are strict
(``sweep_seconds = "1"`` is refused, as TOML can say a number); a variable is text, so a
number, true or false (also ``yes``, ``no``, ``1``, ``0``) or a comma-separated list is
read from it.
"""

from bot.config.loading import load_config
from bot.config.model import Config, ConfigError, WebConfig, WebhookConfig, game_settings

__all__ = ["Config", "ConfigError", "WebConfig", "WebhookConfig", "game_settings", "load_config"]
