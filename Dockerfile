# syntax=docker/dockerfile:1
# One image for every service: `spades serve gateway|table|matchmaking|rating|relay|bots`, `spades migrate`.
# Build: docker build -t ghcr.io/spades-ladder/spades:$(git rev-parse --short HEAD) .

ARG PYTHON_IMAGE=python:3.11-slim-bookworm

# --- builder: resolve nothing, install exactly what uv.lock says ------------------------
FROM ${PYTHON_IMAGE} AS builder

# uv itself is pinned like any other build input.
RUN pip install --no-cache-dir uv==0.13.9

ENV UV_COMPILE_BYTECODE=1 \
    UV_LINK_MODE=copy \
    UV_PYTHON_DOWNLOADS=never \
    UV_PYTHON=/usr/local/bin/python3.11 \
    UV_PROJECT_ENVIRONMENT=/opt/spades/venv

WORKDIR /src

# Dependencies first, from the lock file alone: this layer is reused until uv.lock changes.
# --no-default-groups: the project's runtime dependencies only; no dev tools, and not the
# embedded PostgreSQL and NATS of the `local` group (production runs real ones).
COPY pyproject.toml uv.lock README.md ./
RUN uv sync --frozen --no-default-groups --no-install-project

# Then the project itself, installed into the venv (not editable: the source stays here).
COPY engine ./engine
COPY events ./events
COPY services ./services
RUN uv sync --frozen --no-default-groups --no-editable

# The double-dummy solver's C kernel (engine/ddcore.c: C99, no dependencies), compiled beside
# the installed engine package, where engine/ddcore.py loads it; the runtime stage gets it with
# the venv and has no compiler. Debian's gcc of the pinned base image (not version-pinned: the
# compiler does not ship, only what it builds).
# hadolint ignore=DL3008
RUN apt-get update \
 && apt-get install -y --no-install-recommends gcc libc6-dev \
 && rm -rf /var/lib/apt/lists/* \
 && gcc -O2 -std=c99 -shared -fPIC -o /opt/spades/venv/lib/python3.11/site-packages/engine/_ddcore.so engine/ddcore.c

# --- runtime: the interpreter and the venv, nothing that compiles -----------------------
FROM ${PYTHON_IMAGE} AS runtime

# A fixed UID/GID so Kubernetes can check runAsNonRoot and volumes can be owned by it.
RUN groupadd --system --gid 10001 spades \
 && useradd --system --uid 10001 --gid spades --no-create-home \
    --home-dir /nonexistent --shell /usr/sbin/nologin spades

# Owned by root and not writable by the service: the root filesystem can be read-only.
COPY --from=builder /opt/spades/venv /opt/spades/venv

# Bytecode was compiled in the builder; nothing writes outside /tmp (an emptyDir in Kubernetes).
ENV PATH=/opt/spades/venv/bin:$PATH \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    HOME=/tmp \
    TMPDIR=/tmp \
    SPADES_HTTP_PORT=8000 \
    SPADES_OPS_PORT=9000

USER 10001:10001
WORKDIR /tmp
EXPOSE 8000 9000

ENTRYPOINT ["spades"]
CMD ["serve", "gateway"]
