# Every target installs what it needs: a fresh clone runs `make dev` or `make test` directly.
SHELL := /bin/bash
.DEFAULT_GOAL := help
export UV_PYTHON_DOWNLOADS := never
PY ?= python3
# uv through the interpreter that installed it: found whether or not its script is on PATH
UV := $(PY) -m uv

.PHONY: help
help: ## list the targets
	@grep -hE '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-10s %s\n", $$1, $$2}'

.venv/.synced: pyproject.toml uv.lock
	@$(UV) --version >/dev/null 2>&1 || $(PY) -m pip install --quiet --user uv \
		|| $(PY) -m pip install --quiet uv
	$(UV) sync --frozen
	@touch $@

.PHONY: install
install: .venv/.synced ## create .venv from the lock file

.PHONY: dev
dev: install ## run the platform locally (embedded PostgreSQL and NATS)
	$(UV) run --frozen spades dev

.PHONY: test
test: install ## run the whole test suite against real PostgreSQL and NATS
	$(UV) run --frozen pytest

.PHONY: lint
lint: install ## ruff, the stdlib-only rule for engine/, and strict mypy on engine/ and events/
	$(UV) run --frozen ruff check .
	$(UV) run --frozen ruff format --check .
	$(UV) run --frozen mypy

.PHONY: bench
bench: install ## engine, store and end-to-end benchmarks, each beside a raw baseline of the same run
	$(UV) run --frozen --group bench python -m benchmarks

.PHONY: clean
clean: ## remove the virtualenv and local server data
	rm -rf .venv .spades
