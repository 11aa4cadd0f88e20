# The bot's image. Build: `docker build -t niuniu-bot .`; run: see docs/operator.md.
#
# Reproducible: dependencies come from requirements.lock and the build backend from
# requirements-build.lock, each installed with --require-hashes (`make lock` regenerates
# them), and the project itself with --no-deps. To pin the base image too, build with
# --build-arg PYTHON_IMAGE=python:3.11-slim@sha256:<digest>.
ARG PYTHON_IMAGE=python:3.11-slim

# -- build: the project's wheel, by the locked build backend ------------------------------
FROM ${PYTHON_IMAGE} AS build
ENV PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_CACHE_DIR=1 PIP_ROOT_USER_ACTION=ignore
WORKDIR /src
COPY requirements-build.lock ./
RUN pip install --require-hashes -r requirements-build.lock
COPY pyproject.toml README.md ./
COPY bot ./bot
COPY migrations ./migrations
RUN pip wheel --no-deps --no-build-isolation --wheel-dir /wheels .

# -- the image ----------------------------------------------------------------------------
FROM ${PYTHON_IMAGE}
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_CACHE_DIR=1 PIP_ROOT_USER_ACTION=ignore
RUN useradd --create-home --uid 10001 niuniu \
    && mkdir -p /data && chown niuniu /data
# The fonts the results pictures are drawn with (bot/pictures/fonts.py): Latin and the card
# suits, Chinese, Japanese and Korean names, colour emoji.
RUN apt-get update \
    && apt-get install -y --no-install-recommends \
        fonts-dejavu-core fonts-noto-cjk fonts-noto-color-emoji \
    && rm -rf /var/lib/apt/lists/*

# Dependencies first, in their own layer: a change of the code alone does not reinstall them.
COPY requirements.lock /tmp/
RUN pip install --require-hashes -r /tmp/requirements.lock && rm /tmp/requirements.lock
COPY --from=build /wheels /tmp/wheels
RUN pip install --no-deps /tmp/wheels/*.whl && rm -r /tmp/wheels
COPY deploy/healthcheck.py /usr/local/lib/niuniu-healthcheck.py

USER niuniu
WORKDIR /data
# SQLite lands in /data unless NIUNIU_DATABASE_URL points elsewhere (e.g. PostgreSQL).
ENV NIUNIU_DATABASE_URL=sqlite+aiosqlite:////data/niuniu.db \
    NIUNIU_WEB_LISTEN=0.0.0.0:8080
VOLUME ["/data"]
# 8080: /healthz, /readyz, /metrics and the console (NIUNIU_WEB_LISTEN);
# 8443: Telegram's webhook in webhook mode ([telegram.webhook] port).
EXPOSE 8080 8443
# /healthz answers 200 while the process is up; a start period covers migrations.
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 \
    CMD ["python", "/usr/local/lib/niuniu-healthcheck.py"]
CMD ["niuniu-bot", "run"]
