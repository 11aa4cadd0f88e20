"""While the database is unavailable, the shell logs it a line now and then, saying how
often it was found so in between, not a line (or a traceback) per sweep and message."""

from __future__ import annotations

import logging

import pytest

from bot.telegram.outages import OutageLog
from tests.helpers.telegram import SecondsClock

DOWN = ConnectionRefusedError(111, "Connect call failed")


def test_an_outage_is_logged_once_every_few_seconds_with_a_count(
    caplog: pytest.LogCaptureFixture,
) -> None:
    clock = SecondsClock()
    outages = OutageLog(logging.getLogger("test.outages"), every_seconds=10.0, clock=clock)

    with caplog.at_level(logging.WARNING, logger="test.outages"):
        for _ in range(5):
            outages.unavailable("sweep", DOWN)
            clock.advance(1.0)
        clock.advance(6.0)
        outages.unavailable("sweep", DOWN)

    assert [record.getMessage() for record in caplog.records] == [
        "sweep: the database is unavailable: [Errno 111] Connect call failed",
        "sweep: the database is unavailable: [Errno 111] Connect call failed (4 more since)",
    ]
    assert all(record.exc_info is None for record in caplog.records)
