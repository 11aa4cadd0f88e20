"""What tests in more than one module share: fakes, clocks, sample rounds, play helpers.

Test modules import from here (or get fixtures from a ``conftest.py``), never from one
another, and never from ``bench/``; benchmarks may import from here."""
