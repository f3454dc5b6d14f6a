"""The contract, fuzzed: schemathesis generates requests from the OpenAPI document (valid and
invalid ones) and sends them to `graphsvc serve` over the real servers, with every check on:
no server error; status codes, content types, headers and bodies as documented; schema-valid
requests accepted and invalid ones refused; the key not ignored; missing required headers
and unsupported methods refused (405 with Allow). Its phases: the documented examples, the
coverage of every keyword's edges, then random fuzzing, a bounded number of cases per
operation. The SSE route is left out (a stream never ends; tests/integration/events/test_events.py tests it).

Runs through schemathesis' own runner (``st run``): the same run a developer repeats by hand
with the command this test prints. The seed is fixed so a red run replays; FUZZ_SEED picks
another, FUZZ_EXAMPLES a longer run. Requests act on random ids (the dev servers' demo data
has short ids such as ``u12``; anything the fuzzer does is a legal call of the API)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from graphsvc.settings import Settings
from tests.support.helpers import served_api
from tests.support.paths import ROOT

pytestmark = pytest.mark.long  # minutes: handed out first on a parallel run


def test_every_operation_keeps_its_contract(
    server_settings: Settings, service_key: str, tmp_path: Path
) -> None:
    examples = os.environ.get("FUZZ_EXAMPLES", "25")
    seed = os.environ.get("FUZZ_SEED", "1")
    # budgets off: the fuzzer alone spends thousands of requests a minute with one key
    with served_api(server_settings, RATE_LIMITS_ENABLED="0") as url:
        command = [str(Path(sys.executable).parent / "st"), "run", f"{url}/openapi.json"]
        command += ["--checks", "all", "--max-examples", examples, "--seed", seed, "--workers", "1"]
        # the Server-Sent Events streams never end: their keys and ids are checked elsewhere
        command += ["--exclude-path-regex", "/(events|notifications)$", "--request-timeout", "30"]
        # not the documented examples: they name the demo graph's users (alice, bob), and the
        # suite checks them itself (tests/api/test_api_examples.py)
        command += ["--phases", "coverage,fuzzing,stateful"]
        command += ["--header", f"Authorization: Bearer {service_key}"]
        run = subprocess.run(
            command, cwd=ROOT, capture_output=True, text=True, timeout=1_200, check=False
        )
    report = run.stdout + run.stderr
    (tmp_path / "fuzz.log").write_text(report)
    shown = " ".join(command).replace(service_key, "$KEY")
    assert run.returncode == 0, f"{shown}\n{report[-6_000:]}"
    generated = re.search(r"(\d+) generated", report)
    assert generated and int(generated.group(1)) > 500, report[-2_000:]
    print(f"\nfuzzer: {generated.group(0)} cases, every check passed ({shown})")
