"""The settings in sections: every environment variable the service reads is read by exactly
one section, under its plain name; ``Settings`` routes plain names to their sections; a bad
value names its variable and never shows a secret; adapters, services and workers are handed
sections, never the whole ``Settings``."""

from __future__ import annotations

import ast
import json
from typing import Any

import pytest
from pydantic import BaseModel, ValidationError
from pydantic.fields import FieldInfo

from graphsvc.settings import (
    SECRET_SETTINGS,
    SECTION_OF,
    SECTIONS,
    LocalServerSettings,
    MirrorSettings,
    Settings,
    development_secrets,
)
from graphsvc.settings.reference import settings_reference
from tests.support.paths import ROOT

# Every variable the service's settings read, as operators set them: a name dropped or renamed
# would silently stop a deployment's value from being read.
ENV_NAMES = frozenset(
    {
        "AFFINITY_HALF_LIFE_DAYS",
        "API_ACCESS_LOG",
        "API_HOST",
        "API_KEY_CACHE_SECONDS",
        "CHANGES_EXPIRY_BATCH",
        "CHANGES_EXPIRY_SECONDS",
        "CHANGES_RETENTION_DAYS",
        "CHANGES_SETTLE_SECONDS",
        "API_KEY_SECRET",
        "API_KEY_STALE_SECONDS",
        "API_PORT",
        "API_SERVER",
        "API_WORKERS",
        "AUDIENCE_CONJUNCTIONS_MAX",
        "AUDIENCE_OPERANDS_MAX",
        "AUDIENCE_SCAN_MAX",
        "AUTH_FAILURES_MAX",
        "AUTH_FAILURE_WINDOW_SECONDS",
        "CELEBRITY_FOLLOWERS",
        "COMMON_SCAN_MAX",
        "CURSOR_SECRET",
        "DEVELOPMENT",
        "DISTANCE_EDGES_MAX",
        "EVENTS_MAX_LEN",
        "NOTIFY_FANOUT_BATCH",
        "IMPORT_MAX_BYTES",
        "ALIASES_MAX",
        "MOVE_COOLDOWN_DAYS",
        "MOVE_BATCH",
        "IMPORT_MAX_ROWS",
        "IMPORT_BATCH",
        "IMPORT_KEEP_DAYS",
        "ACCOUNT_DOMAIN",
        "NOTIFICATIONS_MAX",
        "NOTIFICATIONS_POLL_MS",
        "EVENTS_RECHECK_SECONDS",
        "EVENTS_REPLAY_CHARGE_ENTRIES",
        "EVENTS_REPLAY_MAX",
        "EVENTS_STREAM",
        "EVENTS_STREAMS_PER_KEY",
        "FAMILIAR_MAX_IDS",
        "FAMILIAR_SHOWN_MAX",
        "FANOUT_BATCH_EDGES",
        "TIMELINE_ACTIVE_DAYS",
        "TIMELINE_BACKFILL_POSTS",
        "TIMELINE_CACHE_SECONDS",
        "TIMELINE_CELEBRITY_FOLLOWERS",
        "TIMELINE_CONSUMER_GROUP",
        "LIST_CONSUMER_GROUP",
        "TIMELINE_FANOUT_BATCH",
        "TIMELINE_HYSTERESIS",
        "TIMELINE_READER_CAP",
        "TIMELINE_JOB_LEASE_SECONDS",
        "TIMELINE_MAX_FUTURE_SECONDS",
        "TIMELINE_AUTHOR_CAP",
        "TIMELINE_REBUILD_AUTHORS",
        "TIMELINE_REBUILD_POSTS",
        "TIMELINE_TOMBSTONES_MAX",
        "TIMELINE_TOMBSTONE_DAYS",
        "FOLLOWS_PER_DAY",
        "FOLLOW_REQUESTS_MAX",
        "FOLLOW_WINDOW_SECONDS",
        "HOT_LIST_CAP",
        "INTERACTIONS_FLUSH_ENTRIES",
        "INTERACTIONS_FLUSH_SECONDS",
        "INTERACTIONS_MAX_BATCH",
        "INTERACTIONS_MAX_FUTURE_SECONDS",
        "INTERACTIONS_PAIR_DAILY_MAX",
        "INTERACTION_WEIGHTS",
        "LIST_BATCH_MAX",
        "LIST_FOLLOWS_MAX",
        "LIST_SUBSCRIPTIONS_MAX",
        "LIST_SUBSCRIPTION_BATCH",
        "LIST_DESCRIPTION_MAX",
        "LIST_MEMBERS_MAX",
        "LIST_NAME_MAX",
        "LIST_OWNER_MAX",
        "LOG_JSON",
        "MAX_BLOCKS",
        "MAX_FOLLOWING",
        "MAX_MUTES",
        "MIRROR_JOURNAL_SECONDS",
        "MUTE_MAX_SECONDS",
        "NEO4J_CONNECT_TIMEOUT",
        "NEO4J_DATABASE",
        "NEO4J_JOB_TIMEOUT_SECONDS",
        "NEO4J_PASSWORD",
        "NEO4J_POOL_SIZE",
        "NEO4J_RETRY_SECONDS",
        "NEO4J_TX_TIMEOUT_SECONDS",
        "NEO4J_URI",
        "NEO4J_USER",
        "OUTBOX_BATCH",
        "OUTBOX_GRACE_SECONDS",
        "OUTBOX_RELAY_SECONDS",
        "PAGE_LIMIT_DEFAULT",
        "PAGE_LIMIT_MAX",
        "COLD_START_CHARTS_CONSUMER_GROUP",
        "COLD_START_CHARTS_KEPT",
        "COLD_START_CHARTS_REFRESH_SECONDS",
        "RANKER_MODEL_NAME",
        "RANKER_REFRESH_SECONDS",
        "RANKER_TRAIN_CHECK_SECONDS",
        "RANKER_TRAIN_EVERY_SECONDS",
        "RANKER_TRAIN_GROWTH",
        "RANKER_TRAIN_MIN_EDGES",
        "RANKER_TRAIN_RETRY_SECONDS",
        "RANKER_TRAIN_SHARE",
        "RANKER_TRAIN_USERS",
        "RANKER_TRIAL_SHARE",
        "RANKER_TRIAL_SECONDS",
        "RANKER_TRIAL_MIN_SHOWN",
        "RANKER_VALIDATION_MAX_EDGES",
        "SUGGEST_RECOMMENDATION_TTL_SECONDS",
        "COLD_START_POPULAR_REBUILD_HOURS",
        "SUGGEST_SIMILAR_FOLLOWERS",
        "SUGGEST_SIMILAR_FOLLOWS",
        "COLD_START_TRENDING_HOURS",
        "RATE_LIMITS_ENABLED",
        "RATE_LIMIT_READS",
        "RATE_LIMIT_WRITES",
        "REBUILD_BATCH_USERS",
        "REBUILD_CONCURRENCY",
        "REBUILD_WAIT_SECONDS",
        "REDIS_CLUSTER",
        "REDIS_CONNECT_TIMEOUT",
        "REDIS_POOL_SIZE",
        "REDIS_POOL_TIMEOUT",
        "REDIS_PREFIX",
        "REDIS_RETRY_SECONDS",
        "REDIS_SOCKET_TIMEOUT",
        "REDIS_URL",
        "REDIS_MULTIPLEXED_CONNECTIONS",
        "RELATIONSHIPS_MAX_IDS",
        "REMOVE_FOLLOWERS_MAX_IDS",
        "REQUEST_BODY_MAX_BYTES",
        "REQUEST_DEADLINE_MARGIN_SECONDS",
        "SERIES_BUCKETS_MAX",
        "SERIES_CACHE_SECONDS",
        "SUGGEST_CACHE_SECONDS",
        "SUGGEST_CANDIDATES",
        "SUGGEST_COFOLLOWERS",
        "SUGGEST_COFOLLOW_ITEMS",
        "SUGGEST_EDGES_PER_INTERMEDIARY",
        "SUGGEST_FRESH_DAYS",
        "SUGGEST_IMPRESSIONS_DAYS",
        "SUGGEST_IMPRESSIONS_FREE",
        "SUGGEST_IMPRESSIONS_MAX",
        "SUGGEST_IMPRESSION_DECAY",
        "SUGGEST_INTERMEDIARIES",
        "SUGGEST_SCAN",
        "SUGGEST_SERVED_SECONDS",
        "SUGGEST_THIN",
        "SUGGEST_WALKS",
        "SUGGEST_WALK_FANOUT",
        "SUGGEST_WALK_RESTART",
        "SUGGEST_WALK_STEPS",
        "WORKER_JOBS",
        "WORKER_LEASE_SECONDS",
        "WORKER_POLL_SECONDS",
        "WORKER_QUEUE_MAX",
        "WORKER_RECONCILE_SECONDS",
        "WRITE_BATCH_CONCURRENCY",
        "WRITE_BATCH_MAX",
        "WRITE_BATCH_MAX_BACKGROUND",
        "WRITE_BATCH_WINDOW_MS",
    }
)

# Values the environment may hold where a rule of the field's type would not find a valid one.
SPECIAL = {
    "neo4j_uri": "bolt://graph.example:7687",
    "redis_url": "redis://cache.example:6379/1",
    "redis_prefix": "tt:",
    "rate_limit_reads": "10/second",
    "rate_limit_writes": "5/second",
    "api_server": "granian",
    "interaction_weights": {"like": 1.5},
}


def _field(name: str) -> FieldInfo:
    return SECTIONS[SECTION_OF[name]].model_fields[name]


def _other_value(name: str) -> Any:
    """A valid value of the setting that is not its default."""
    if name in SPECIAL:
        return SPECIAL[name]
    default = _field(name).default
    if isinstance(default, bool):
        return not default
    if isinstance(default, int):
        return default - 1 if default >= 2 else default + 1
    if isinstance(default, float):
        return default / 2
    if default is None:
        return 5.0
    return f"{default}-other"


def _env_text(value: Any) -> str:
    if isinstance(value, dict):
        return json.dumps(value)
    if isinstance(value, bool):
        return str(int(value))
    return str(value)


def test_every_variable_is_read_by_exactly_one_section() -> None:
    declared = [name.upper() for kind in SECTIONS.values() for name in kind.model_fields]
    assert len(declared) == len(set(declared)), "a name declared by two sections"
    assert set(declared) == ENV_NAMES
    assert {name.upper() for name in SECTION_OF} == ENV_NAMES


def test_every_variable_is_read_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    expected = {name.lower(): _other_value(name.lower()) for name in ENV_NAMES}
    for name, value in expected.items():
        monkeypatch.setenv(name.upper(), _env_text(value))
    settings = Settings()
    read = {name: settings.value(name) for name in expected}
    assert read == expected
    for section, kind in SECTIONS.items():  # a section built on its own reads the same
        assert getattr(settings, section) == kind()


def test_a_section_reads_its_own_names_only() -> None:
    with pytest.raises(ValidationError, match="neo4j_uri"):
        MirrorSettings(neo4j_uri="bolt://elsewhere:7687")  # type: ignore[call-arg]


def test_a_variable_named_like_a_section_is_not_read(monkeypatch: pytest.MonkeyPatch) -> None:
    for section in SECTIONS:
        monkeypatch.setenv(section.upper(), "not json")
    assert Settings() == Settings.model_construct(**{s: k() for s, k in SECTIONS.items()})


def test_plain_keyword_names_are_routed_to_their_sections(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("MIRROR_JOURNAL_SECONDS", "77")
    monkeypatch.setenv("REDIS_PREFIX", "env:")
    settings = Settings(hot_list_cap=5, neo4j_uri="bolt://graph.example:7687")
    assert settings.mirror.hot_list_cap == 5
    assert settings.neo4j.neo4j_uri == "bolt://graph.example:7687"
    assert settings.mirror.mirror_journal_seconds == 77  # the rest of the section: environment
    assert settings.redis.redis_prefix == "env:"


def test_a_section_may_be_given_whole_or_as_a_mapping(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MIRROR_JOURNAL_SECONDS", "77")
    given = MirrorSettings(hot_list_cap=9)
    assert Settings(mirror=given).mirror is given
    assert Settings(mirror=given, hot_list_cap=3).mirror.hot_list_cap == 3
    from_mapping = Settings(mirror={"hot_list_cap": 4}).mirror  # type: ignore[arg-type]
    assert (from_mapping.hot_list_cap, from_mapping.mirror_journal_seconds) == (4, 77)


def test_an_unknown_name_is_refused_by_name() -> None:
    with pytest.raises(ValidationError, match="hot_list_capp: no such setting"):
        Settings(hot_list_capp=5)
    with pytest.raises(ValidationError, match="hot_list_capp: no such setting"):
        Settings().with_values(hot_list_capp=5)


def test_local_server_names_are_refused() -> None:
    with pytest.raises(ValidationError, match="state_dir: set on LocalServerSettings"):
        Settings(state_dir="/tmp/elsewhere")


def test_with_values_replaces_by_plain_name_and_validates(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    settings = Settings(redis_prefix="one:")
    monkeypatch.setenv("REDIS_PREFIX", "two:")
    monkeypatch.setenv("HOT_LIST_CAP", "11")
    changed = settings.with_values(hot_list_cap=5, neo4j_retry_seconds=0.5)
    assert (changed.mirror.hot_list_cap, changed.neo4j.neo4j_retry_seconds) == (5, 0.5)
    assert changed.redis.redis_prefix == "one:"  # the copy's other values, not the environment
    assert changed.mirror.rebuild_batch_users == settings.mirror.rebuild_batch_users
    assert settings.mirror.hot_list_cap != 5  # the original is left as it was
    with pytest.raises(ValidationError, match="hot_list_cap"):
        settings.with_values(hot_list_cap=0)


def test_model_copy_takes_sections_only() -> None:
    settings = Settings()
    with pytest.raises(ValueError, match="hot_list_cap: not a section of Settings"):
        settings.model_copy(update={"hot_list_cap": 5})
    mirror = MirrorSettings(hot_list_cap=5)
    assert settings.model_copy(update={"mirror": mirror}).mirror is mirror


def test_a_bad_value_in_the_environment_names_its_variable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("HOT_LIST_CAP", "abc")
    with pytest.raises(ValidationError) as raised:
        Settings()
    assert raised.value.errors()[0]["loc"] == ("hot_list_cap",)
    assert "hot_list_cap" in str(raised.value)


@pytest.mark.parametrize("name", sorted(SECRET_SETTINGS))
def test_a_secret_never_shows_in_an_error(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    secret = "sekrit-1234"  # too short for a key, and no valid password either as a number
    bad: Any = secret if _field(name).metadata else 4_271_828
    if isinstance(bad, str):
        monkeypatch.setenv(name.upper(), bad)
        with pytest.raises(ValidationError) as raised:
            Settings()
    else:
        with pytest.raises(ValidationError) as raised:
            Settings(**{name: bad})
    assert raised.value.errors()[0]["loc"] == (name,)
    assert str(bad) not in str(raised.value) and str(bad) not in repr(raised.value)


def test_a_secret_never_shows_in_the_reference(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in SECRET_SETTINGS:
        monkeypatch.setenv(name.upper(), f"a-deployment-{name}-value")
    shown = " ".join(f"{row.default} {row.description}" for row in settings_reference())
    for name in SECRET_SETTINGS:
        assert f"a-deployment-{name}-value" not in shown
        assert str(_field(name).default) not in shown


def test_the_reference_lists_each_variable_once_under_its_section() -> None:
    rows = [row for row in settings_reference() if row.section != "LocalServerSettings"]
    assert sorted(row.env for row in rows) == sorted(ENV_NAMES)
    sections = {row.env: row.section for row in rows}
    for name in ENV_NAMES:
        assert sections[name] == type(getattr(Settings(), SECTION_OF[name.lower()])).__name__
    assert sections["HOT_LIST_CAP"] == "MirrorSettings"
    assert {row.env for row in settings_reference(LocalServerSettings)} == {
        name.upper() for name in LocalServerSettings.model_fields
    }


def test_development_secrets_are_named_until_set(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("API_KEY_SECRET", raising=False)
    monkeypatch.delenv("CURSOR_SECRET", raising=False)
    assert development_secrets(Settings()) == ["API_KEY_SECRET", "CURSOR_SECRET"]
    monkeypatch.setenv("CURSOR_SECRET", "a-deployment-cursor-secret")
    assert development_secrets(Settings()) == ["API_KEY_SECRET"]


def test_settings_holds_sections_and_stays_small() -> None:
    assert all(
        isinstance(info.annotation, type) and issubclass(info.annotation, BaseModel)
        for info in Settings.model_fields.values()
    )
    tree = ast.parse((ROOT / "graphsvc" / "settings" / "sections.py").read_text())
    (node,) = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Settings"]
    assert node.end_lineno is not None and node.end_lineno - node.lineno < 150


def _annotations(function: ast.FunctionDef | ast.AsyncFunctionDef) -> list[ast.expr]:
    arguments = function.args
    every = [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]
    every += [arg for arg in (arguments.vararg, arguments.kwarg) if arg is not None]
    return [arg.annotation for arg in every if arg.annotation is not None]


def _names(annotation: ast.expr) -> set[str]:
    named = {node.id for node in ast.walk(annotation) if isinstance(node, ast.Name)}
    texts = [node.value for node in ast.walk(annotation) if isinstance(node, ast.Constant)]
    return named | {word for text in texts if isinstance(text, str) for word in text.split()}


@pytest.mark.parametrize("package", ["adapters", "services", "workers"])
def test_no_part_takes_the_whole_settings(package: str) -> None:
    """A part is handed the sections it reads (``MirrorSettings``...), so its signature says
    what it depends on; only the composition root, the app factory and the tooling hold
    ``Settings``."""
    takes = []
    for path in sorted((ROOT / "graphsvc" / package).rglob("*.py")):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            where = f"{path.relative_to(ROOT)}:{getattr(node, 'lineno', 0)}"
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and any(
                "Settings" in _names(annotation) for annotation in _annotations(node)
            ):
                takes.append(f"{where} {node.name}")
            if (
                isinstance(node, ast.ImportFrom)
                and node.module == "graphsvc.settings"
                and any(alias.name == "Settings" for alias in node.names)
            ):
                takes.append(f"{where} imports Settings")
    assert not takes, "\n".join(takes)


def test_a_plain_name_is_read_from_its_section_only() -> None:
    settings = Settings()
    assert not hasattr(settings, "hot_list_cap")
    assert settings.value("hot_list_cap") == settings.mirror.hot_list_cap
    with pytest.raises(KeyError, match="hot_list_capp"):
        settings.value("hot_list_capp")


def test_a_local_server_knob_given_to_the_serving_settings_is_refused() -> None:
    with pytest.raises(ValidationError, match="neo4j_heap, state_dir: set on LocalServerSettings"):
        Settings(state_dir="/tmp/elsewhere", neo4j_heap="1g")
    assert LocalServerSettings(state_dir="relative").state_dir.is_absolute()
