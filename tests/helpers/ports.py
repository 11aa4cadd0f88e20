"""A free local port for a server a test starts."""

from __future__ import annotations

import socket


def free_port() -> int:
    """A local port nothing listens on now (bound, then closed at once; the server a test
    starts binds it a moment later)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port
