"""The operator console: a web application for operators and group admins (issue 11).

``build_console`` makes it; the web server mounts it at ``/console/``. Sign-in
(``app``, ``signing``), who sees what (``access``), pages (``pages``), CSV exports
(``exports``)."""

from bot.web.console.app import build_console as build_console
from bot.web.signing import LinkSigner as LinkSigner
