"""``Gathering``: per key one write at a time, the jobs that wait written together next,
each caller told its own outcome."""

from __future__ import annotations

import asyncio

import pytest

from bot.store.gatherings import Gathering


class Writes:
    """A store whose writes wait until let go, and that records what each wrote."""

    def __init__(self) -> None:
        self.written: list[list[str]] = []
        self.gate = asyncio.Event()

    async def alone(self, job: str) -> str:
        self.written.append([job])
        await self.gate.wait()
        if job.startswith("bad"):
            raise ValueError(job)
        return f"{job} done"

    async def together(self, jobs: list[str]) -> list[str | Exception]:
        self.written.append(list(jobs))
        await self.gate.wait()
        return [ValueError(job) if job.startswith("bad") else f"{job} done" for job in jobs]


async def spin() -> None:
    for _ in range(5):
        await asyncio.sleep(0)


async def test_the_first_job_is_written_alone_and_those_that_wait_together_next() -> None:
    writes = Writes()
    gathering = Gathering(writes.alone, writes.together)
    first = asyncio.create_task(gathering.run("chat", "a"))
    await spin()
    assert writes.written == [["a"]]  # at once: nothing waited before it
    rest = [asyncio.create_task(gathering.run("chat", job)) for job in ("b", "bad c", "d")]
    await spin()
    assert writes.written == [["a"]]  # they wait for the first write
    writes.gate.set()
    assert await first == "a done"
    assert [await task for task in (rest[0], rest[2])] == ["b done", "d done"]
    with pytest.raises(ValueError, match="bad c"):  # only its own job fails
        await rest[1]
    assert writes.written == [["a"], ["b", "bad c", "d"]]
    assert (gathering.writes, gathering.jobs) == (2, 4)
    assert len(gathering) == 0


async def test_keys_are_written_side_by_side() -> None:
    writes = Writes()
    gathering = Gathering(writes.alone, writes.together)
    tasks = [asyncio.create_task(gathering.run(key, key)) for key in ("x", "y")]
    await spin()
    assert writes.written == [["x"], ["y"]]
    assert len(gathering) == 2
    writes.gate.set()
    assert await asyncio.gather(*tasks) == ["x done", "y done"]
    assert len(gathering) == 0


async def test_a_failed_write_of_several_fails_each_of_them() -> None:
    async def alone(job: str) -> str:
        await gate.wait()
        return job

    async def together(jobs: list[str]) -> list[str | Exception]:
        raise ConnectionError("the database went away")

    gate = asyncio.Event()
    gathering = Gathering(alone, together)
    first = asyncio.create_task(gathering.run("chat", "a"))
    await spin()
    rest = [asyncio.create_task(gathering.run("chat", job)) for job in ("b", "c")]
    await spin()
    gate.set()
    assert await first == "a"
    for task in rest:
        with pytest.raises(ConnectionError):
            await task
    assert len(gathering) == 0


async def test_a_job_whose_caller_gave_up_is_not_written() -> None:
    writes = Writes()
    gathering = Gathering(writes.alone, writes.together)
    first = asyncio.create_task(gathering.run("chat", "a"))
    await spin()
    gone = asyncio.create_task(gathering.run("chat", "b"))
    kept = asyncio.create_task(gathering.run("chat", "c"))
    await spin()
    gone.cancel()
    writes.gate.set()
    assert (await first, await kept) == ("a done", "c done")
    assert writes.written == [["a"], ["c"]]
