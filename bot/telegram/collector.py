"""The garbage collector of a long-running bot process, tuned once it has started.

By default CPython's oldest generation is collected now and then by walking every object
the process holds: with many busy groups that is a long pause in which no deadline fires
and no command is answered, and deadlines go late because of it. What exists once the bot
has started (modules, the application, compiled statements) lives as long as the process:
frozen, collections skip it. Young collections run less often, so fewer short-lived
objects (an update, its reply) survive into the generations that are walked again and
again.
"""

from __future__ import annotations

import gc

#: Allocations (less deallocations) between young collections; CPython's default is 700.
YOUNG_COLLECTION_EVERY = 10_000


def tune_garbage_collector() -> None:
    """Freeze what the started bot holds and space young collections out (see the
    module's docstring). Called once, by the process that runs the bot."""
    gc.collect()
    gc.freeze()
    _, middle, oldest = gc.get_threshold()
    gc.set_threshold(YOUNG_COLLECTION_EVERY, middle, oldest)
