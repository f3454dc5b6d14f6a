"""The family files of named Cypher queries (``cypher/<family>.cypher``) and their parser.

Every query the service runs is found under its ``family/name``, once, with the header a
reviewer reads before its statement; a file that breaks the format names its line, so a typo
fails the first query asked for instead of running the wrong text."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

from graphsvc.adapters.neo4j.queries import (
    QueryFileError,
    UnknownQuery,
    catalog,
    cypher_dir,
    load,
    parse_family,
    query,
    statements,
    with_prelude,
)
from tests.support.paths import ROOT

FAMILIES = {
    "list_follows",
    "subscriptions",
    "baselines",
    "bells",
    "bulk",
    "portable",
    "history",
    "cold_start",
    "keys",
    "lists",
    "moves",
    "moderation",
    "mutes",
    "outbox",
    "pages",
    "privacy",
    "ranker_models",
    "relations",
    "requests",
    "schema",
    "snapshots",
    "suggestions",
}
# What CONTRIBUTING.md asks of every header: what it locks, its parameters, what it returns.
HEADER_WORDS = (r"\bLocking:", r"\bParams:", r"\bReturns\b")


def family_files() -> list[Path]:
    return sorted(Path(str(cypher_dir())).glob("*.cypher"))


def test_a_checkout_reads_the_top_level_folder_a_wheel_carries_inside_the_package() -> None:
    assert Path(str(cypher_dir())) == ROOT / "cypher"
    assert not (ROOT / "graphsvc" / "cypher").exists()
    hatch = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["hatch"]
    assert hatch["build"]["targets"]["wheel"]["force-include"] == {"cypher": "graphsvc/cypher"}


def test_there_is_one_file_per_family_and_each_parses() -> None:
    assert {path.stem for path in family_files()} == FAMILIES
    total = 0
    for path in family_files():
        found = parse_family(path.stem, str(path), path.read_text(encoding="utf-8"))
        assert len(found) >= 3, path.name
        assert all(name.startswith(f"{path.stem}/") for name in found)
        total += len(found)
    assert total == len(catalog()) >= 70


def test_every_query_is_found_by_family_and_name_and_starts_with_its_name_line() -> None:
    for name, found in catalog().items():
        family, _, bare = name.partition("/")
        assert query(name) == found.text
        assert found.text.startswith(f"// name: {bare}\n")
        assert found.source.endswith(f"{family}.cypher")
    assert {"relations/follow", "relations/unfollow", "snapshots/snapshot"} <= set(catalog())
    assert {"pages/followers_page", "pages/following_page", "schema/schema"} <= set(catalog())


@pytest.mark.parametrize("name", sorted(catalog()))
def test_every_query_has_a_header_saying_locking_parameters_and_returns(name: str) -> None:
    header = catalog()[name].header
    missing = [word for word in HEADER_WORDS if not re.search(word, header)]
    assert not missing, f"{name}: its header lacks {missing}"


def test_no_query_formats_a_value_into_its_text() -> None:
    """Values are ``$parameters``; a Python format field or a ``.cypher`` path of another
    layout would mean the text is built or referenced some other way."""
    for name, found in catalog().items():
        assert not re.search(r"\{\d*\}|%s|\.cypher\b", found.text), name


def test_the_schema_splits_into_its_statements() -> None:
    schema = statements("schema/schema")
    creates = [line for line in query("schema/schema").splitlines() if line.startswith("CREATE")]
    assert len(schema) == len(creates) >= 11 and not any(part.endswith(";") for part in schema)
    assert any("ranker_model_version" in part for part in schema)  # one version per model
    # the list indexes of the follower / following pages and the common lists
    for name in ("follows_dst_since", "follows_src_since", "follows_dst_src", "follows_src_dst"):
        assert any(f"INDEX {name} IF NOT EXISTS" in part for part in schema)


def test_a_prelude_runs_first_as_a_subquery_under_the_statement_s_options() -> None:
    text = with_prelude("relations/lock_users", "relations/follow")
    assert text.startswith("CYPHER replan=skip\nCALL () {\n// name: lock_users\nUNWIND ")
    assert text.count("CYPHER") == 1, "the options lead the statement, once"
    follow = query("relations/follow").replace("CYPHER replan=skip\n", "")
    assert text.endswith("}\n" + follow.rstrip("\n"))


def test_a_batch_s_statements_keep_their_first_plan() -> None:
    """A replan of a batch's statement holds its users' locks meanwhile (cypher/relations)."""
    for name in ("lock_users", "follow", "unfollow", "block", "unblock", "approve", "reject"):
        text = query(f"relations/{name}")
        assert text.splitlines()[1] == "CYPHER replan=skip", name


def write(tmp_path: Path, text: str, family: str = "things") -> Path:
    path = tmp_path / f"{family}.cypher"
    path.write_text(text, encoding="utf-8")
    return path


GOOD = """\
// Things: a family header, which no query carries.

// name: first
// The first thing.
// Locking: none (a read). Params: none. Returns: one.
RETURN 1 AS one

// name: second
// The second thing.
// Locking: none (a read). Params: $x. Returns: x.
RETURN $x AS x
"""


def test_a_family_file_gives_each_query_its_name_line_header_and_statement(
    tmp_path: Path,
) -> None:
    found = load([write(tmp_path, GOOD)])
    assert list(found) == ["things/first", "things/second"]
    second = found["things/second"]
    assert second.line == 8 and second.header.startswith("// The second thing.\n")
    assert (
        second.header == "// The second thing.\n// Locking: none (a read). Params: $x. Returns: x."
    )
    assert second.text == "// name: second\nRETURN $x AS x\n"  # the header is not sent
    assert found["things/first"].text.endswith("RETURN 1 AS one\n")  # no blank lines kept


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (GOOD + "\n// name: first\n// Again.\nRETURN 2\n", r":13: 'first' is named twice \(first"),
        ("// name: bare\nRETURN 1\n", r":1: 'bare' has no header comment"),
        ("// name: blank\n\nRETURN 1\n", r":1: 'blank' has no header comment"),
        ("// name:\n// A header.\nRETURN 1\n", r":1: a name line with no name"),
        ("// name:   \n// A header.\nRETURN 1\n", r":1: a name line with no name"),
        ("// name: Bad-Name\n// A header.\nRETURN 1\n", r":1: 'Bad-Name' is not a query name"),
        ("// name: empty\n// Only a header.\n\n", r":1: 'empty' has no statement"),
        ("// Family.\nRETURN 1\n// name: late\n// A header.\nRETURN 2\n", r":2: a statement"),
    ],
)
def test_a_broken_family_file_is_refused_at_its_line(
    tmp_path: Path, text: str, message: str
) -> None:
    path = write(tmp_path, text)
    with pytest.raises(QueryFileError, match=re.escape(str(path)) + message):
        load([path])


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("pages/no_such_page", r"pages\.cypher has no '// name: no_such_page' line"),
        ("nowhere/followers_page", r"no family file .*nowhere\.cypher"),
        ("followers_page", "query names are 'family/name'"),
        ("pages/followers_page.cypher", "has no '// name: followers_page.cypher' line"),
    ],
)
def test_an_unknown_name_is_refused_naming_the_file(name: str, message: str) -> None:
    with pytest.raises(UnknownQuery, match=message):
        query(name)
