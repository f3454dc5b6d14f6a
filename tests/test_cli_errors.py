"""A CLI command that a store fails ends in one line naming the cause, never a traceback."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import free_port

from graphsvc.api.app import create_app
from graphsvc.domain.access import new_token
from graphsvc.settings import DevelopmentSecrets, Settings


def test_a_load_into_an_unreachable_neo4j_is_one_line(tmp_path: Path) -> None:
    edges = tmp_path / "edges.txt"
    edges.write_text("a b\nb c\n")
    env = {**os.environ, "NEO4J_URI": f"bolt://127.0.0.1:{free_port()}",
           "NEO4J_RETRY_SECONDS": "1", "NEO4J_CONNECT_TIMEOUT": "1"}  # fmt: skip
    result = subprocess.run(
        [sys.executable, "-m", "graphsvc.ops.cli", "load", str(edges), "--no-progress"],
        env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith("graphsvc load: neo4j: ServiceUnavailable: "), result.stderr


def test_a_bad_setting_in_the_environment_is_one_line_naming_it() -> None:
    env = {**os.environ, "WRITE_BATCH_MAX": "0"}
    result = subprocess.run(
        [sys.executable, "-m", "graphsvc.ops.cli", "serve"],
        env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert result.returncode == 2, result.stderr
    assert result.stderr.strip() == (
        "graphsvc: setting WRITE_BATCH_MAX='0': Input should be greater than or equal to 1"
    ), result.stderr


def test_train_pymk_refusing_its_input_is_one_line() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "graphsvc.ops.cli", "train-pymk", "--share", "1.5", "--dry-run",
         "--no-progress"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    assert result.stderr.strip() == (
        "graphsvc: the held-out share must be between 0 and 1, got 1.5"
    ), result.stderr


def test_serving_with_the_development_secrets_is_refused_outside_development() -> None:
    env = {k: v for k, v in os.environ.items()
           if k not in ("API_KEY_SECRET", "CURSOR_SECRET", "DEVELOPMENT")}  # fmt: skip
    result = subprocess.run(
        [sys.executable, "-m", "graphsvc.ops.cli", "serve", "--port", "1"],
        env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert result.returncode == 2, result.stderr
    assert result.stderr.strip() == (
        "graphsvc serve: set API_KEY_SECRET and CURSOR_SECRET (the development values are "
        "public), or DEVELOPMENT=1 on a development machine"
    ), result.stderr


def test_the_app_itself_refuses_the_development_secrets() -> None:
    """Whatever server runs it (uvicorn or gunicorn directly): the app's factory refuses."""
    with pytest.raises(DevelopmentSecrets, match="CURSOR_SECRET"):
        create_app(Settings(development=False, api_key_secret="a-production-secret-42"))
    create_app(Settings(development=False, api_key_secret="x" * 20, cursor_secret="y" * 20))
    create_app(Settings(development=True))


def test_a_refused_secret_setting_is_named_and_its_value_never_shown() -> None:
    short = "not-16-chars-xy"  # too short for a secret, and not to be echoed
    for name in ("CURSOR_SECRET", "API_KEY_SECRET"):
        result = subprocess.run(
            [sys.executable, "-m", "graphsvc.ops.cli", "serve"],
            env={**os.environ, name: short}, capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        assert result.returncode == 2, result.stderr
        assert short not in result.stderr + result.stdout
        assert result.stderr.strip() == (
            f"graphsvc: setting {name}: String should have at least 16 characters"
        ), result.stderr


def test_revoking_by_a_whole_key_names_its_id_and_never_shows_the_key() -> None:
    key_id, token = new_token()
    result = subprocess.run(
        [sys.executable, "-m", "graphsvc.ops.cli", "keys", "revoke", token],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert result.returncode == 2, result.stderr
    assert token not in result.stderr + result.stdout
    assert result.stderr.strip() == (
        f"graphsvc: keys revoke takes a key's id, not the key (its id: {key_id})"
    ), result.stderr
