"""The container's health check: exit 0 when the bot's web endpoint answers 200, else 1.

Run by the image's HEALTHCHECK and docker-compose.yml with the image's own Python (the
slim image has no curl). It asks http://127.0.0.1:PORT/healthz, PORT taken from
NIUNIU_WEB_LISTEN ("host:port", 8080 when unset), or the URL given as its argument.
Standard library only: it runs outside the project's code.
"""

from __future__ import annotations

import os
import sys
import urllib.error
import urllib.request
from collections.abc import Mapping

TIMEOUT_SECONDS = 4.0


def health_url(environ: Mapping[str, str]) -> str:
    """The URL of /healthz on this machine, from NIUNIU_WEB_LISTEN."""
    listen = environ.get("NIUNIU_WEB_LISTEN", "0.0.0.0:8080")
    port = listen.rpartition(":")[2] or "8080"
    return f"http://127.0.0.1:{port}/healthz"


def check(url: str) -> str | None:
    """None when ``url`` answers 200, else one line saying what went wrong."""
    try:
        with urllib.request.urlopen(url, timeout=TIMEOUT_SECONDS) as response:
            status = response.status
    except urllib.error.HTTPError as error:
        return f"{url} answered {error.code}"
    except (urllib.error.URLError, OSError) as error:
        reason = getattr(error, "reason", error)
        return f"{url} did not answer: {reason}"
    return None if status == 200 else f"{url} answered {status}"


def main(argv: list[str]) -> int:
    url = argv[1] if len(argv) > 1 else health_url(os.environ)
    problem = check(url)
    if problem is not None:
        print(f"unhealthy: {problem}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
