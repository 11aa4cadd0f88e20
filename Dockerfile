FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
WORKDIR /app
COPY pyproject.toml README.md alembic.ini ./
COPY bot ./bot
COPY migrations ./migrations
RUN pip install --no-cache-dir . \
    && useradd --create-home --uid 10001 niuniu \
    && mkdir -p /data && chown niuniu /data

USER niuniu
WORKDIR /data
# SQLite lands in /data unless NIUNIU_DATABASE_URL points elsewhere (e.g. PostgreSQL).
ENV NIUNIU_DATABASE_URL=sqlite+aiosqlite:////data/niuniu.db
VOLUME ["/data"]
CMD ["niuniu-bot", "run"]
