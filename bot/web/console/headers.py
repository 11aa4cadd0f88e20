"""Headers on every response of the console (pages, CSV exports, the sign-in page,
errors, redirects): nothing is cached anywhere (``no-store``: the pages hold players'
chips and the audit log), no page may be framed by another site (against clickjacking),
no type is guessed from a body, and no address of the console leaves in a Referer (a
sign-in link's token is in one).

Set as each response is prepared (``on_response_prepare``), so that a streamed CSV and an
error aiohttp makes itself carry them too."""

from __future__ import annotations

from aiohttp import web

PRIVATE_HEADERS = {
    "Cache-Control": "no-store",
    "X-Frame-Options": "DENY",
    "Content-Security-Policy": "frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}


async def add_private_headers(request: web.Request, response: web.StreamResponse) -> None:
    """The console's signal handler for ``on_response_prepare``."""
    response.headers.update(PRIVATE_HEADERS)
