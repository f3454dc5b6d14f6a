"""Mastodon's CSV formats as plain values: rows read (a header optional), bad rows refused by
name, and the files written back byte for byte."""

from __future__ import annotations

import pytest

from graphsvc.domain.portable import Entry, Kind, csv_rows, parse, render_csv, render_json

FOLLOWING = (
    "Account address,Show boosts,Notify on new posts,Languages\n"
    "ada,true,false,\n"
    'bob,false,true,"en, de"\n'
)


def test_a_following_file_reads_and_writes_back_byte_for_byte() -> None:
    parsed = parse(Kind.FOLLOWING, csv_rows(Kind.FOLLOWING, FOLLOWING), "")
    assert parsed.refused == []
    entries = [entry for _, entry in parsed.entries]
    assert entries == [
        Entry("ada", reblogs=True, notify=False),
        Entry("bob", reblogs=False, notify=True, languages=("en", "de")),
    ]
    assert render_csv(Kind.FOLLOWING, entries) == FOLLOWING


@pytest.mark.parametrize(
    ("kind", "text"),
    [
        (Kind.BLOCKS, "ada\nbob\n"),
        (Kind.MUTES, "Account address,Hide notifications\nada,true\nbob,false\n"),
        (Kind.LISTS, 'Friends,ada\n"Work, mostly",bob\n'),
    ],
)
def test_every_kind_round_trips(kind: Kind, text: str) -> None:
    parsed = parse(kind, csv_rows(kind, text), "")
    assert parsed.refused == []
    assert render_csv(kind, [entry for _, entry in parsed.entries]) == text


def test_a_header_is_optional_and_a_local_domain_is_the_id() -> None:
    rows = csv_rows(Kind.BLOCKS, "Account address\nada@here.example\n@bob\n")
    parsed = parse(Kind.BLOCKS, rows, "here.example")
    assert [(n, e.account) for n, e in parsed.entries] == [(2, "ada"), (3, "bob")]


def test_bad_rows_are_refused_with_their_line_and_the_rest_stand() -> None:
    text = "ada,true,false,\nnot an id,true,false,\nbob@elsewhere.example\ncy,maybe\nada\n"
    parsed = parse(Kind.FOLLOWING, csv_rows(Kind.FOLLOWING, text), "here.example")
    assert [(n, e.account) for n, e in parsed.entries] == [(1, "ada")]  # ada once
    assert [(r.row, r.reason) for r in parsed.refused] == [
        (2, "malformed"),
        (3, "malformed"),
        (4, "malformed"),
    ]
    assert "another server" in parsed.refused[1].message


def test_json_rows_are_the_exports_shape() -> None:
    entries = [Entry("ada", languages=("ja",))]
    items = render_json(Kind.FOLLOWING, entries)
    assert items == [{"account": "ada", "show_reblogs": True, "notify": False, "languages": ["ja"]}]
    again = parse(Kind.FOLLOWING, enumerate(items, start=1), "")
    assert [e for _, e in again.entries] == entries
    odd = parse(Kind.BLOCKS, [(1, {"account": "ada", "extra": 1}), (2, 5)], "")
    assert [r.reason for r in odd.refused] == ["malformed", "malformed"]


JSON_VALUES = [None, True, 5, 1.5, "", "  ", "ada", [], ["en", None], {}, {"x": 1}]


@pytest.mark.parametrize("kind", list(Kind))
def test_any_json_row_is_read_or_refused_never_an_error(kind: Kind) -> None:
    # a body a client sends is arbitrary JSON: every field of every type is either a value
    # of the row or a named refusal, never an exception the service would answer with 500
    fields = ("account", "list", "show_reblogs", "notify", "languages", "hide_notifications")
    rows = [{name: value} for name in fields for value in JSON_VALUES]
    rows += [{"list": value, "account": "ada"} for value in JSON_VALUES]
    rows += [{"account": "ada", name: value} for name in fields[2:] for value in JSON_VALUES]
    parsed = parse(kind, enumerate(rows, start=1), "")
    assert len(parsed.entries) + len(parsed.refused) >= 1
    assert {r.reason for r in parsed.refused} <= {"malformed"}
