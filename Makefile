# Two commands do everything on a fresh machine:
#   make run   - venv, install, Neo4j + Redis up, demo data, API at http://127.0.0.1:8000/docs
#                and one worker for the background work
#   make test  - venv, install, the suite's own Neo4j + Redis up (ports 19687/19379, and 19697/19389
#                for its second worker), the whole suite on two workers
#   make test-unit - the tests that need no server, in seconds
#   make test-slow - the long versions of the fault and race tests (`slow`), which `make test` skips
#   make bench - own Neo4j + Redis (ports 27687/26379), graph SIZE=S|M, one table of measurements
#   make test-cluster - the whole suite on its own Neo4j + a 3-master Redis Cluster (ports 18687, 16501-16503)
#   make docs  - the documentation site (MkDocs, strict) from docs/ into .local/site, the
#                notebooks with the outputs of the suite's last run (`make test` builds it too)
# Installs come from requirements.lock: every dependency of every extra pinned, with its hashes
# (resolved for Python 3.11 and up, on any platform). uv, pinned there too, installs them into
# .venv, then the project itself as an editable without dependencies; a change to the lock or
# pyproject.toml installs again.
#   make lock  - re-resolve requirements.lock (and requirements-client.lock, the client extra
#                alone, which the suite installs into a fresh venv) after a change to pyproject.toml's dependencies
#                (locked versions that still fit are kept; UPGRADE=1 takes the newest)
#   make audit - pip-audit of the locked versions against PyPI's advisories (`make test` runs
#                it first): fails on an advisory, one line saying it was skipped when PyPI's
#                vulnerability data cannot be reached
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV   := .venv
BIN    := $(VENV)/bin
LOCK   := requirements.lock
STAMP  := $(VENV)/.installed-$(shell cat pyproject.toml $(LOCK) | cksum | cut -d' ' -f1)
UV     := $(BIN)/uv

.PHONY: install lock generate audit services run demo test test-slow stop-test test-cluster bench docs stop status lint format clean
SIZE ?= S
# test-cluster's own servers: never the Neo4j of `make test` (the interactions checkpoint is
# global), and the evaluation's servers of its own too.
# test's own servers: a suite run never writes into the data `make run` serves.
TEST_ENV := STATE_DIR=.local/test NEO4J_URI=bolt://127.0.0.1:19687 \
	REDIS_URL=redis://127.0.0.1:19379/0 NEO4J_HEAP=2g NEO4J_PAGECACHE=2g
CLUSTER_ENV := STATE_DIR=.local/cluster NEO4J_URI=bolt://127.0.0.1:18687 \
	REDIS_URL=redis://127.0.0.1:16501/0 REDIS_CLUSTER=1 NEO4J_HEAP=1g NEO4J_PAGECACHE=1g \
	EVAL_NEO4J_URI=bolt://127.0.0.1:18688 EVAL_REDIS_URL=redis://127.0.0.1:16521/0

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

# uv at the version and hashes the lock pins (the installs below keep it at that version)
$(UV): | $(BIN)/python
	@awk '/^uv==/ {p = 1} p {print; if (!/\\$$/) exit}' $(LOCK) > $(VENV)/uv-requirement.txt
	$(BIN)/pip install --quiet --require-hashes --no-deps -r $(VENV)/uv-requirement.txt

$(STAMP): pyproject.toml $(LOCK) | $(UV)
	$(UV) pip install --quiet --python $(BIN)/python --require-hashes -r $(LOCK)
	$(UV) pip install --quiet --python $(BIN)/python --no-deps --editable .
	@rm -f $(VENV)/.installed-* && touch $@

install: $(STAMP)

lock: | $(UV)
	$(UV) pip compile --quiet pyproject.toml --all-extras --universal --python-version 3.11 \
		--generate-hashes --custom-compile-command 'make lock' $(if $(UPGRADE),--upgrade) \
		-o $(LOCK)
	$(UV) pip compile --quiet pyproject.toml --extra client --universal --python-version 3.11 \
		--generate-hashes --custom-compile-command 'make lock' $(if $(UPGRADE),--upgrade) \
		-o requirements-client.lock

# the blocking client, generated from the asynchronous one (tests/unit checks it is current)
generate: install
	$(BIN)/python -m graphsvc.client._generate

# pip-audit asks https://pypi.org/pypi/NAME/VERSION/json for each locked version: the probe
# asks the same for one release, through the same HTTP stack. --strict: a version it could not
# look up is a failure, never a silent pass. A probe that fails after a failed audit means the
# data stopped answering mid-way: skipped too.
AUDIT_DATA := https://pypi.org/pypi/pip/24.0/json
AUDIT_PROBE = $(BIN)/python -c "import requests; \
	requests.get('$(AUDIT_DATA)', timeout=10).raise_for_status()" 2>/dev/null
audit: install
	@if ! $(AUDIT_PROBE); then \
		echo "audit skipped: PyPI's vulnerability data ($(AUDIT_DATA)) is not reachable"; \
	elif $(BIN)/pip-audit --strict --progress-spinner off --vulnerability-service pypi \
		--disable-pip --require-hashes -r $(LOCK); then :; \
	elif ! $(AUDIT_PROBE); then \
		echo "audit skipped: PyPI's vulnerability data stopped answering during the audit"; \
	else exit 1; fi

services: install
	$(BIN)/graphsvc services up

demo: services
	$(BIN)/graphsvc demo

# the API and one worker beside it (background work: relay, fan-outs, jobs); Ctrl-C stops both.
# DEVELOPMENT=1: the app accepts this source's development secrets (it refuses them otherwise)
run: demo
	$(BIN)/graphsvc keys local
	$(BIN)/graphsvc worker & worker=$$!; trap 'kill $$worker 2>/dev/null' EXIT INT TERM; \
		DEVELOPMENT=1 $(BIN)/graphsvc serve

# `make test` also runs the mirror's core tests on the cluster (beside the suite), so CI keeps the
# cluster path honest; `make test-cluster` runs every test there.
CLUSTER_CORE := tests/integration/mirror/test_key_slots.py \
	tests/integration/mirror/test_redis_modes.py tests/integration/events/test_events.py \
	tests/integration/pages/test_paging.py tests/integration/mirror/test_mirror_order.py \
	tests/integration/transactions/test_concurrency.py tests/integration/mirror/test_reconcile.py \
	tests/integration/mirror/test_cold_reads.py tests/integration/mirror/test_cold_mirror.py \
	tests/integration/relations/test_relations_api.py tests/integration/pages/test_celebrity.py \
	tests/integration/timelines/test_timelines.py tests/integration/workers/test_worker.py \
	tests/integration/suggestions/test_cold_start.py \
	tests/integration/suggestions/test_suggestion_feedback.py

# the tests that need no server (domain, cursors, ids, parsers, the package's shape): seconds
test-unit: install
	$(BIN)/pytest tests/unit

# When the run ends, passed, failed or interrupted, every server of the suite's state folders
# (.local/test, .local/cluster: its own, its second worker's, the cluster's, the evaluations')
# and the baseline's PostgreSQL are stopped; the exit status is the run's.
# The suite runs on TEST_WORKERS pytest-xdist workers, each test module on one worker, each
# worker with servers of its own (tests/support/workers.py): the first the ones started here.
# Beside it, on servers of their own, the mirror's core tests run on a Redis Cluster; their
# output is shown after the suite's. The suite's servers stop once it ends (an idle Neo4j still
# spends CPU), then the site is built.
TEST_WORKERS ?= 2
test: install audit
	@trap '$(MAKE) --no-print-directory stop-test' EXIT; trap 'exit 130' INT TERM; set -e; \
	mkdir -p .local; rm -f .local/test-hangs.log; \
	$(TEST_ENV) $(BIN)/graphsvc services up; \
	( $(CLUSTER_ENV) $(BIN)/graphsvc services up && \
		$(CLUSTER_ENV) $(BIN)/pytest -p no:cacheprovider $(CLUSTER_CORE) ) \
		> .local/cluster-tier.log 2>&1 & cluster=$$!; \
	suite=0; $(TEST_ENV) $(BIN)/pytest -n $(TEST_WORKERS) --dist loadfile --durations=25 \
		|| suite=$$?; \
	STATE_DIR=.local/test $(BIN)/graphsvc services down --all > /dev/null; \
	site=0; NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --quiet || site=$$?; \
	tier=0; wait $$cluster || tier=$$?; \
	echo "== the mirror's core tests on a Redis Cluster (.local/cluster-tier.log)"; \
	cat .local/cluster-tier.log; \
	if [ -s .local/test-hangs.log ]; then \
		echo "== what tests that ran past their bound waited on (.local/test-hangs.log)"; \
		cat .local/test-hangs.log; fi; \
	echo "== suite: exit $$suite; site: exit $$site; cluster tier: exit $$tier"; \
	test $$suite -eq 0 -a $$site -eq 0 -a $$tier -eq 0

# The long versions of the fault and race tests (marked `slow`, which `make test` leaves out):
# twenty rounds of an API and two workers starting together on an empty database, and five
# longer rounds of the chaos test (Redis, then Neo4j, killed under eight writers).
test-slow: install
	@trap '$(MAKE) --no-print-directory stop-test' EXIT; trap 'exit 130' INT TERM; set -e; \
	$(TEST_ENV) $(BIN)/graphsvc services up; \
	$(TEST_ENV) $(BIN)/pytest -m slow -s

stop-test:
	@test -x $(BIN)/graphsvc && STATE_DIR=.local/test $(BIN)/graphsvc services down --all || true
	@test -x $(BIN)/graphsvc && STATE_DIR=.local/cluster $(BIN)/graphsvc services down --all || true
	@test -x $(BIN)/python && $(BIN)/python -m bench.postgres down --home .local/test-postgres || true

test-cluster: install
	$(CLUSTER_ENV) $(BIN)/graphsvc services up
	$(CLUSTER_ENV) $(BIN)/pytest

bench: install
	$(BIN)/python -m bench.run --size $(SIZE)

# the settings tables and import contracts are generated from the code (docs/hooks.py)
# The notebooks' pages show the outputs of the suite's last run (.local/notebooks); without
# one, the notebooks run first against the suite's own servers (a few minutes).
docs: install
	@test -d .local/notebooks || { trap '$(MAKE) --no-print-directory stop-test' EXIT; set -e; \
		$(TEST_ENV) $(BIN)/graphsvc services up; \
		$(TEST_ENV) $(BIN)/pytest -q tests/integration/client/test_notebooks.py; }
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --quiet

# every server under .local: make run's, the suite's, the cluster's, the bench's, the
# evaluations' (found by their pid files), then the PostgreSQL of the bench and of the suite
stop:
	@test -x $(BIN)/graphsvc && $(BIN)/graphsvc services down --all || true
	@test -x $(BIN)/python && $(BIN)/python -m bench.postgres down || true
	@test -x $(BIN)/python && $(BIN)/python -m bench.postgres down --home .local/test-postgres || true

status: install
	$(BIN)/graphsvc services status

lint: install
	$(BIN)/ruff check graphsvc tests bench
	$(BIN)/ruff format --check graphsvc tests bench
	$(BIN)/lint-imports --no-cache
	$(BIN)/mypy graphsvc/client graphsvc/wire
	$(BIN)/vulture graphsvc tests bench vulture_allow.py --min-confidence 60 \
		--ignore-decorators "@router.get,@router.put,@router.post,@router.delete,@with_body.post,@field_validator,@model_validator,@property,@cached_property,@command" \
		--ignore-names "get_route_handler,model_config,media_type,render,tb,__getattr__,to_pandas,pytest_*,pytestmark,should_exit"

format: install
	$(BIN)/ruff check --fix graphsvc tests bench
	$(BIN)/ruff format graphsvc tests bench

clean: stop
	rm -rf $(VENV) .local
