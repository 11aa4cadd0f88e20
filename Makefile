# The Quickstart on a fresh clone: `make demo` and `make test` need GNU make and Python 3.11
# or later (python3), nothing else. Each creates the virtual environment when it is missing
# and installs the project with its test extras when pyproject.toml changed since.
#
#   make demo ARGS="--ruleset bullbull"   arguments for `niuniu-bot demo`
#   make test PYTEST_ARGS="tests/unit"    arguments for pytest (default: every test)
#   make test VENV=.venv-ci               another virtual environment (.ci/run uses this)
#   make test PYTHON=python3.12           the Python that creates the virtual environment

PYTHON ?= python3
VENV ?= .venv
ARGS ?=
PYTEST_ARGS ?=

BIN := $(VENV)/bin
# Written once the project is installed; pip runs again when pyproject.toml is newer.
INSTALLED := $(VENV)/.installed

# A recipe line that fails, with one clear line, when the Python $(1) is older than 3.11
# (or missing); $(2) says what to do.
define require_python
$(1) -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null || { \
    echo "niuniu-bot needs Python 3.11 or later, but $(1) is $$($(1) -c 'import platform; print(platform.python_version())' 2>/dev/null || echo 'missing'): $(2)." >&2; \
    exit 1; }
endef

# Start the local PostgreSQL server when it is installed (Debian's pg_ctlcluster) and down,
# and wait for it; without one, the PostgreSQL tests skip, saying why (unless
# NIUNIU_REQUIRE_POSTGRES=1, as in CI, makes them fail).
define start_postgres
if command -v pg_isready >/dev/null 2>&1 && ! pg_isready -q -h 127.0.0.1 -p 5432; then \
    version=$$(ls /etc/postgresql 2>/dev/null | head -n 1); \
    if [ -n "$$version" ] && command -v pg_ctlcluster >/dev/null 2>&1; then \
        echo "Starting PostgreSQL $$version"; \
        pg_ctlcluster --skip-systemctl-redirect "$$version" main start || true; \
        for _ in $$(seq 1 30); do pg_isready -q -h 127.0.0.1 -p 5432 && break; sleep 1; done; \
    fi; \
fi
endef

.PHONY: help demo test lint lock

help:
	@echo "make demo   a few rounds offline: the real bot against a fake Telegram (ARGS=...)"
	@echo "make test   lint, types, import contracts, then the tests (PYTEST_ARGS=...)"
	@echo "make lint   ruff, ruff format --check, mypy --strict (bot, tests), lint-imports"
	@echo "make lock   regenerate requirements.lock and requirements-build.lock (LOCK_ARGS=--upgrade)"

$(BIN)/python:
	@$(call require_python,$(PYTHON),choose another with PYTHON=python3.X)
	$(PYTHON) -m venv $(VENV)

$(INSTALLED): pyproject.toml | $(BIN)/python
	@$(call require_python,$(BIN)/python,remove $(VENV) to create it again)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $@

demo: $(INSTALLED)
	$(BIN)/niuniu-bot demo $(ARGS)

# mypy checks the tests too: their fakes (tests/helpers) against the protocols they stand
# for, and every test but the end-to-end ones (tests/e2e), which drive the bot as a process.
lint: $(INSTALLED)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy --strict bot
	$(BIN)/mypy --strict tests --exclude tests/e2e/
	$(BIN)/lint-imports --no-logo

test: lint
	@$(start_postgres)
	$(BIN)/python -m pytest -q $(PYTEST_ARGS)

# The lock files the Docker image installs with `pip install --require-hashes`: the runtime
# dependencies of pyproject.toml (requirements.lock) and its build backend
# (requirements-build.lock), every version pinned with the hashes of all its files, for
# CPython 3.11 (the image's python:3.11-slim) on Linux x86_64 and aarch64. Each is resolved
# for both platforms and must come out the same. Pins already in a file are kept unless
# pyproject.toml excludes them; `make lock LOCK_ARGS=--upgrade` takes the newest versions.
# uv is installed into the virtual environment for this only (not a dependency).
UV_VERSION ?= 0.13.9
LOCK_ARGS ?=
LOCK_PLATFORMS := x86_64-manylinux_2_28 aarch64-manylinux_2_28
UV_COMPILE = $(BIN)/uv pip compile --quiet --python-version 3.11 --generate-hashes \
	--custom-compile-command "make lock" $(LOCK_ARGS)

# $(call lock_for_both,INPUT,LOCK): resolve INPUT into LOCK for each platform, compare.
define lock_for_both
@set -e; first=; for platform in $(LOCK_PLATFORMS); do \
    out=build/lock/$$platform-$(notdir $(2)); \
    if [ -f $(2) ]; then cp $(2) $$out; fi; \
    $(UV_COMPILE) --python-platform $$platform -o $$out $(1); \
    if [ -z "$$first" ]; then first=$$out; \
    elif ! cmp -s $$first $$out; then \
        echo "$(2): $$first and $$out differ; the lock must be the same on both" >&2; \
        diff $$first $$out >&2; exit 1; fi; \
done; cp $$first $(2); echo "wrote $(2)"
endef

lock: | $(BIN)/python
	$(BIN)/python -m pip install --quiet 'uv==$(UV_VERSION)'
	@mkdir -p build/lock
	$(call lock_for_both,pyproject.toml,requirements.lock)
	$(BIN)/python -c 'import tomllib; print(*tomllib.load(open("pyproject.toml", "rb"))["build-system"]["requires"], sep="\n")' > build/lock/build-requires.in
	$(call lock_for_both,build/lock/build-requires.in,requirements-build.lock)
