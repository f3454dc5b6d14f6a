# Two commands do everything on a fresh machine:
#   make run   - venv, install, Neo4j + Redis up, demo data, API at http://127.0.0.1:8000/docs
#   make test  - venv, install, Neo4j + Redis up, the whole test suite
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-$(shell cksum pyproject.toml | cut -d' ' -f1)

.PHONY: install services run demo test stop status lint format clean

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --editable '.[dev]'
	@rm -f $(VENV)/.installed-* && touch $@

install: $(STAMP)

services: install
	$(BIN)/graphsvc services up

demo: services
	$(BIN)/graphsvc demo

run: demo
	$(BIN)/graphsvc serve

test: services
	$(BIN)/pytest

stop:
	@test -x $(BIN)/graphsvc && $(BIN)/graphsvc services down || true

status: install
	$(BIN)/graphsvc services status

lint: install
	$(BIN)/ruff check graphsvc tests
	$(BIN)/ruff format --check graphsvc tests

format: install
	$(BIN)/ruff check --fix graphsvc tests
	$(BIN)/ruff format graphsvc tests

clean: stop
	rm -rf $(VENV) .local
