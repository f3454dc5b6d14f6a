"""A CLI command that fails ends in one line naming the cause, never a traceback: a store
that cannot be reached or refuses, a setting, an input file. Usage errors are Click's usage
and error lines. Every command answers --help."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from graphsvc.api.app import create_app
from graphsvc.domain.access import new_token
from graphsvc.ops import cli
from graphsvc.settings import DevelopmentSecrets, Settings
from tests.support.helpers import CLI_COMMANDS, CLI_PATHS, free_port


def test_a_load_into_an_unreachable_neo4j_is_one_line(tmp_path: Path) -> None:
    edges = tmp_path / "edges.txt"
    edges.write_text("a b\nb c\n")
    env = {
        **os.environ,
        "NEO4J_URI": f"bolt://127.0.0.1:{free_port()}",
        "NEO4J_RETRY_SECONDS": "1",
        "NEO4J_CONNECT_TIMEOUT": "1",
    }
    result = subprocess.run(
        [sys.executable, "-m", "graphsvc.ops.cli", "load", str(edges), "--no-progress"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith("graphsvc load: neo4j: ServiceUnavailable: "), result.stderr


def test_a_bad_setting_in_the_environment_is_one_line_naming_it() -> None:
    env = {**os.environ, "WRITE_BATCH_MAX": "0"}
    result = subprocess.run(
        [sys.executable, "-m", "graphsvc.ops.cli", "serve"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 2, result.stderr
    assert result.stderr.strip() == (
        "graphsvc: setting WRITE_BATCH_MAX='0': Input should be greater than or equal to 1"
    ), result.stderr


def test_ranker_train_refusing_its_input_is_one_line() -> None:
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "graphsvc.ops.cli",
            "ranker",
            "train",
            "--share",
            "1.5",
            "--dry-run",
            "--no-progress",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    assert result.stderr.strip() == (
        "graphsvc: the held-out share must be between 0 and 1, got 1.5"
    ), result.stderr


def test_serving_with_the_development_secrets_is_refused_outside_development() -> None:
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("API_KEY_SECRET", "CURSOR_SECRET", "DEVELOPMENT")
    }
    result = subprocess.run(
        [sys.executable, "-m", "graphsvc.ops.cli", "serve", "--port", "1"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
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
            env={**os.environ, name: short},
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert result.returncode == 2, result.stderr
        assert short not in result.stderr + result.stdout
        assert result.stderr.strip() == (
            f"graphsvc: setting {name}: String should have at least 16 characters"
        ), result.stderr


def test_revoking_by_a_whole_key_names_its_id_and_never_shows_the_key() -> None:
    key_id, token = new_token()
    result = subprocess.run(
        [sys.executable, "-m", "graphsvc.ops.cli", "keys", "revoke", token],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 2, result.stderr
    assert token not in result.stderr + result.stdout
    assert result.stderr.strip() == (
        f"graphsvc: keys revoke takes a key's id, not the key (its id: {key_id})"
    ), result.stderr


def graphsvc(*argv: str, **env: str) -> subprocess.CompletedProcess[str]:
    """`graphsvc ARGV` as a process (its stderr is what an operator reads)."""
    return subprocess.run(
        [sys.executable, "-m", "graphsvc.ops.cli", *argv],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_a_bad_setting_fails_every_command_in_one_line_before_any_work(tmp_path: Path) -> None:
    out = tmp_path / "never.txt"
    result = graphsvc("gen", "--size", "XS", "--out", str(out), REDIS_POOL_SIZE="lots")
    assert result.returncode == 2, result.stderr
    assert result.stderr.strip() == (
        "graphsvc: setting REDIS_POOL_SIZE='lots': Input should be a valid integer, unable to "
        "parse string as an integer"
    ), result.stderr
    assert not out.exists()
    assert graphsvc("gen", "--help", REDIS_POOL_SIZE="lots").returncode == 0  # help still answers


def test_a_bad_edge_row_is_one_line_naming_the_file_and_line(tmp_path: Path) -> None:
    edges = tmp_path / "edges.txt"
    edges.write_text("a b\nb\n")
    result = graphsvc("load", str(edges), "--no-progress")
    assert result.returncode == 2, result.stderr
    assert result.stderr.strip() == (
        f"graphsvc: {edges}:2: expected 'src dst [time]', got 1 fields"
    ), result.stderr


def test_usage_errors_are_clicks_lines_never_a_traceback(tmp_path: Path) -> None:
    """A missing file, an unknown command, an unknown option, a bad choice: usage and one
    error line, exit code 2."""
    missing = tmp_path / "missing.txt"
    for argv, error in (
        (
            ("load", str(missing)),
            f"Error: Invalid value for 'FILE': file '{missing}' does not exist.",
        ),
        (("nosuch",), "Error: No such command 'nosuch'."),
        (("gen", "--bogus"), "Error: No such option: --bogus"),
        (("gen", "--out", "x", "--size", "XXL"), "Error: Invalid value for '--size'"),
        (
            ("ranker", "eval", "--edges", __file__, "--seed", "1", "--seeds", "1,2"),
            "Error: Invalid value for '--seed': give --seed or --seeds, not both",
        ),
        (
            ("ranker", "eval", "--edges", __file__, "--seeds", "1,1"),
            "Error: Invalid value for '--seeds': expected distinct integers: '1,1'",
        ),
    ):
        result = graphsvc(*argv)
        assert result.returncode == 2, (argv, result.stderr)
        lines = result.stderr.strip().splitlines()
        assert lines[0].startswith("Usage: graphsvc"), (argv, result.stderr)
        assert lines[-1].startswith(error), (argv, result.stderr)
        assert "Traceback" not in result.stderr and result.stdout == ""


def test_a_command_refused_as_asked_is_one_line_and_exit_code_1() -> None:
    for argv, line in (
        (("check",), "graphsvc check: name user ids or pass --all"),
        (("rebuild",), "graphsvc rebuild: name user ids or pass --all"),
        (("reconcile",), "graphsvc reconcile: name user ids, or pass --all or --every"),
    ):
        result = graphsvc(*argv)
        assert (result.returncode, result.stderr.strip()) == (1, line), result.stderr


def test_an_unreachable_redis_ends_in_one_line_naming_it() -> None:
    result = graphsvc("relay", REDIS_URL=f"redis://127.0.0.1:{free_port()}/0")
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith("graphsvc relay: redis: ConnectionError: "), result.stderr


def test_help_lists_every_command_with_its_summary(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["--help"]) == 0
    out = capsys.readouterr().out
    listed = out.split("Commands:\n", 1)[1].splitlines()
    assert [line.split()[0] for line in listed if line.strip()] == CLI_COMMANDS
    assert all(len(line.split()) > 2 for line in listed if line.strip())  # each with its help


@pytest.mark.parametrize("command", CLI_PATHS)
def test_every_command_answers_help(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    """Without touching a store or reading a setting: help is read as the arguments are."""
    assert cli.main([*command.split(), "--help"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"Usage: graphsvc {command} [OPTIONS]")
    assert "--help" in out
