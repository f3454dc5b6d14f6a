"""The documentation stays true as the code moves: the settings reference it is generated
from is complete, and secrets never show their values."""

from __future__ import annotations

from graphsvc.settings import (
    SECRET_SETTINGS,
    LocalServerSettings,
    Settings,
    settings_reference,
)


def test_every_setting_has_a_row_with_a_description() -> None:
    rows = settings_reference()
    names = {row.env for row in rows}
    fields = {name.upper() for name in Settings.model_fields | LocalServerSettings.model_fields}
    assert names == fields
    bare = [row.env for row in rows if not row.description.strip()]
    assert not bare, f"settings without a description (Field(description=...)): {bare}"


def test_a_row_names_the_class_that_declares_the_setting() -> None:
    sections = {row.env: row.section for row in settings_reference()}
    assert sections["NEO4J_URI"] == "Settings"
    assert sections["FEED_INBOX_CAP"] == "TimelineSettings"
    assert sections["STATE_DIR"] == "LocalServerSettings"


def test_secrets_show_no_default_value() -> None:
    rows = {row.env: row for row in settings_reference()}
    for name in SECRET_SETTINGS:
        assert rows[name.upper()].default == "(development value)"
    shown = " ".join(row.default for row in rows.values())
    for name in SECRET_SETTINGS:
        assert str(Settings.model_fields[name].default) not in shown


def test_defaults_are_written_as_the_environment_takes_them() -> None:
    rows = {row.env: row.default for row in settings_reference()}
    assert rows["REDIS_CLUSTER"] == "false"
    assert rows["WORKER_RECONCILE_SECONDS"] == "unset"
    assert rows["NEO4J_TX_TIMEOUT_SECONDS"] == "5"
    assert rows["STATE_DIR"] == "./.local"  # never a path of the machine that built the docs
    assert rows["INTERACTION_WEIGHTS"].startswith('{"message": 5')
