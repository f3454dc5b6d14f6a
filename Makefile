# Two commands do everything on a fresh machine:
#   make run   - venv, install, Neo4j + Redis up, demo data, API at http://127.0.0.1:8000/docs
#                and one worker for the background work
#   make test  - venv, install, Neo4j + Redis up, the whole test suite
#   make bench - own Neo4j + Redis (ports 27687/26379), graph SIZE=S|M, one table of measurements
#   make test-cluster - the whole suite on its own Neo4j + a 3-master Redis Cluster (ports 18687, 16501-16503)
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-$(shell cksum pyproject.toml | cut -d' ' -f1)

.PHONY: install services run demo test test-cluster bench stop status lint format clean
SIZE ?= S
# test-cluster's own servers: never the Neo4j of `make test` (the interactions checkpoint is
# global), and the evaluation's servers of its own too.
CLUSTER_ENV := STATE_DIR=.local/cluster NEO4J_URI=bolt://127.0.0.1:18687 \
	REDIS_URL=redis://127.0.0.1:16501/0 REDIS_CLUSTER=1 NEO4J_HEAP=1g NEO4J_PAGECACHE=1g \
	EVAL_NEO4J_URI=bolt://127.0.0.1:18688 EVAL_REDIS_URL=redis://127.0.0.1:16521/0

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --editable '.[server,client,dev,bench]'
	@rm -f $(VENV)/.installed-* && touch $@

install: $(STAMP)

services: install
	$(BIN)/graphsvc services up

demo: services
	$(BIN)/graphsvc demo

# the API and one worker beside it (background work: relay, fan-outs, jobs); Ctrl-C stops both
run: demo
	$(BIN)/graphsvc keys local
	$(BIN)/graphsvc worker & worker=$$!; trap 'kill $$worker 2>/dev/null' EXIT INT TERM; \
		$(BIN)/graphsvc serve

# `make test` also runs the mirror's core tests on the cluster (half a minute), so CI keeps the
# cluster path honest; `make test-cluster` runs every test there.
CLUSTER_CORE := tests/test_key_slots.py tests/test_redis_modes.py tests/test_events.py \
	tests/test_paging.py tests/test_mirror_order.py tests/test_concurrency.py \
	tests/test_reconcile.py tests/test_cold_reads.py tests/test_cold_mirror.py \
	tests/test_relations_api.py tests/test_celebrity.py tests/test_timelines.py \
	tests/test_worker.py

test: services
	$(BIN)/pytest
	$(CLUSTER_ENV) $(BIN)/graphsvc services up
	$(CLUSTER_ENV) $(BIN)/pytest $(CLUSTER_CORE)

test-cluster: install
	$(CLUSTER_ENV) $(BIN)/graphsvc services up
	$(CLUSTER_ENV) $(BIN)/pytest

bench: install
	$(BIN)/python -m bench.run --size $(SIZE)

stop:
	@test -x $(BIN)/graphsvc && $(BIN)/graphsvc services down || true
	@test -x $(BIN)/graphsvc && STATE_DIR=.local/bench NEO4J_URI=bolt://127.0.0.1:27687 \
		REDIS_URL=redis://127.0.0.1:26379/0 $(BIN)/graphsvc services down || true
	@test -x $(BIN)/graphsvc && STATE_DIR=.local/eval NEO4J_URI=bolt://127.0.0.1:37687 \
		REDIS_URL=redis://127.0.0.1:36379/0 $(BIN)/graphsvc services down || true
	@test -x $(BIN)/graphsvc && $(CLUSTER_ENV) $(BIN)/graphsvc services down || true
	@test -x $(BIN)/graphsvc && STATE_DIR=.local/cluster/eval NEO4J_URI=bolt://127.0.0.1:18688 \
		REDIS_URL=redis://127.0.0.1:16521/0 REDIS_CLUSTER=1 $(BIN)/graphsvc services down || true
	@test -x $(BIN)/python && $(BIN)/python -m bench.postgres down || true
	@test -x $(BIN)/python && $(BIN)/python -m bench.postgres down --home .local/test-postgres || true

status: install
	$(BIN)/graphsvc services status

lint: install
	$(BIN)/ruff check graphsvc tests bench
	$(BIN)/ruff format --check graphsvc tests bench
	$(BIN)/lint-imports --no-cache

format: install
	$(BIN)/ruff check --fix graphsvc tests bench
	$(BIN)/ruff format graphsvc tests bench

clean: stop
	rm -rf $(VENV) .local
