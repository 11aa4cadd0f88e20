"""Sign-in attempts per client address: at most ``limit`` in any ``window`` seconds.

In memory, per process: it slows a guesser down (links and widget data are signed, so
guessing is hopeless anyway) without a table written on every attempt. Bounded: the least
recently seen addresses are forgotten first.

Behind a reverse proxy every request comes from the proxy's address, so one limit would
hold for everyone; :func:`client_address` finds the client a trusted proxy names instead.
"""

from __future__ import annotations

import ipaddress
from collections import deque
from collections.abc import Callable, Sequence

from cachetools import LRUCache

IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network
IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

#: Addresses remembered at once.
ADDRESSES_REMEMBERED = 10_000


def _parsed(address: str) -> IPAddress | None:
    try:
        return ipaddress.ip_address(address.strip())
    except ValueError:
        return None


def _trusted(address: IPAddress | None, proxies: Sequence[IPNetwork]) -> bool:
    return address is not None and any(address in network for network in proxies)


def client_address(
    remote: str | None, forwarded_for: Sequence[str], proxies: Sequence[IPNetwork]
) -> str:
    """Who sent a request: the peer ``remote``, unless it is one of the trusted
    ``proxies``; then the rightmost address in the ``X-Forwarded-For`` headers
    (``forwarded_for``, as received) that is not a trusted proxy. Entries that are not IP
    addresses are skipped; when no entry names an untrusted address, the client is the
    leftmost trusted one, or the peer itself when no entry is an address at all.

    Written here rather than taken from ``aiohttp-remotes``: its strict middleware refuses
    every request that did not pass through the proxies (a Prometheus scrape of
    ``/metrics`` does not), and its relaxed one believes the leftmost address, which any
    client writes itself. Each proxy appends the address it saw, so reading from the right
    and stopping at the first untrusted hop gives the one address no client can forge;
    skipping what is not an address keeps a client that writes garbage under the limit of
    the address it is really seen at.
    """
    peer = remote or "unknown"
    if not _trusted(_parsed(peer), proxies):
        return peer
    hops = [
        address
        for header in forwarded_for
        for hop in header.split(",")
        if (address := _parsed(hop)) is not None
    ]
    for hop in reversed(hops):
        if not _trusted(hop, proxies):
            return str(hop)
    return str(hops[0]) if hops else peer


class AttemptLimiter:
    """Counts attempts per address in a sliding window (see the module's docstring)."""

    def __init__(self, clock: Callable[[], float], *, limit: int = 10, window: float = 60.0):
        self.clock = clock
        self.limit = limit
        self.window = window
        self._attempts: LRUCache[str, deque[float]] = LRUCache(ADDRESSES_REMEMBERED)

    def allow(self, address: str) -> bool:
        """Count an attempt from ``address``; ``False`` once it has had ``limit`` in the
        window (a refused attempt is not counted)."""
        now = self.clock()
        times = self._attempts.get(address)
        if times is None:
            times = deque()
            self._attempts[address] = times
        while times and times[0] <= now - self.window:
            times.popleft()
        if len(times) >= self.limit:
            return False
        times.append(now)
        return True
