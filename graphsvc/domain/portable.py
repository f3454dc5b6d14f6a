"""Portable relations: a user's follows, blocks, mutes and lists as files it takes elsewhere
and brings back, in Mastodon's CSV formats (also JSON). Plain values and the formats only.

Mastodon's exports, which these read and write byte for byte (rows aside, whose order is the
service's: newest first):

- following: a header ``Account address,Show boosts,Notify on new posts,Languages``, then a
  row per follow (``true``/``false``; languages joined by ``, ``, empty for every language);
- blocks: a row per blocked account, no header;
- mutes: a header ``Account address,Hide notifications``, then a row per mute;
- lists: a row ``List name,Account address`` per member, no header.

An account address is the user id, as Mastodon writes a local account (its username); an
import also takes ``id@ACCOUNT_DOMAIN``, this service's own domain, and refuses any other
domain's account as unknown here. A header row is optional on import for every kind.
"""

from __future__ import annotations

import csv
import enum
import io
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from graphsvc.domain.follow_options import LANGUAGE, LANGUAGES_MAX
from graphsvc.wire.ids import is_user_id

SHOWN_MAX = 200  # characters of a refused row quoted back


class Kind(enum.StrEnum):
    FOLLOWING = "following"
    BLOCKS = "blocks"
    MUTES = "mutes"
    LISTS = "lists"


class Mode(enum.StrEnum):
    MERGE = "merge"  # add what the file holds, keep the rest
    OVERWRITE = "overwrite"  # make the user's entries of this kind exactly the file's


HEADERS: dict[Kind, tuple[str, ...]] = {
    Kind.FOLLOWING: ("Account address", "Show boosts", "Notify on new posts", "Languages"),
    Kind.BLOCKS: ("Account address",),
    Kind.MUTES: ("Account address", "Hide notifications"),
    Kind.LISTS: ("List name", "Account address"),
}
WRITES_HEADER = {Kind.FOLLOWING: True, Kind.BLOCKS: False, Kind.MUTES: True, Kind.LISTS: False}
JSON_FIELDS: dict[Kind, tuple[str, ...]] = {
    Kind.FOLLOWING: ("account", "show_reblogs", "notify", "languages"),
    Kind.BLOCKS: ("account",),
    Kind.MUTES: ("account", "hide_notifications"),
    Kind.LISTS: ("list", "account"),
}


@dataclass(frozen=True, slots=True)
class Entry:
    """One row: whom it names, and what its kind carries."""

    account: str
    reblogs: bool = True
    notify: bool = False
    languages: tuple[str, ...] = ()
    hide_notifications: bool = True
    list_name: str = ""
    list_id: str = ""  # the user's list of that name, when it has one (never written out)


@dataclass(frozen=True, slots=True)
class Refused:
    """A row an import did not apply, and why (``reason``: malformed, unknown_user, self,
    blocked, suspended, limit, ...)."""

    row: int  # 1-based, as a spreadsheet numbers the file's lines (a JSON item's position)
    value: str
    reason: str
    message: str


class Malformed(ValueError):
    """A row this format cannot read; its message says why."""


@dataclass(frozen=True, slots=True)
class Parsed:
    entries: list[tuple[int, Entry]]  # (row, entry), each account (list and account) once
    refused: list[Refused]


def parse(kind: Kind, rows: Iterable[tuple[int, Any]], domain: str) -> Parsed:
    """The entries of an import's rows (a CSV row is a list of strings, a JSON one an
    object), each checked on its own: a bad row is refused, the others stand. A repeated
    account keeps its first row."""
    entries: dict[tuple[str, str], tuple[int, Entry]] = {}
    refused: list[Refused] = []
    for number, raw in rows:
        try:
            entry = _entry(kind, raw, domain)
        except Malformed as exc:
            refused.append(Refused(number, shown(raw), "malformed", str(exc)))
            continue
        entries.setdefault((entry.list_name, entry.account), (number, entry))
    return Parsed(list(entries.values()), refused)


def csv_rows(kind: Kind, text: str) -> list[tuple[int, list[str]]]:
    """The data rows of a CSV file (a header row skipped), numbered by line; blank lines
    skipped."""
    rows = [(n, row) for n, row in enumerate(csv.reader(io.StringIO(text)), start=1) if row]
    header = [cell.strip().lower() for cell in HEADERS[kind]]
    if rows and [cell.strip().lower() for cell in rows[0][1]] == header:
        rows = rows[1:]
    return rows


def render_csv(kind: Kind, entries: Sequence[Entry]) -> str:
    """Mastodon's export of this kind (``\\n`` line ends, fields quoted only when needed)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    if WRITES_HEADER[kind]:
        writer.writerow(HEADERS[kind])
    for entry in entries:
        writer.writerow(_csv_cells(kind, entry))
    return out.getvalue()


def render_json(kind: Kind, entries: Sequence[Entry]) -> list[dict[str, Any]]:
    return [dict(zip(JSON_FIELDS[kind], _json_cells(kind, e), strict=True)) for e in entries]


def shown(raw: Any) -> str:
    """A refused row as its file had it (a CSV line's fields, a JSON row), cut short."""
    if isinstance(raw, list) and all(isinstance(cell, str) for cell in raw):
        text = ",".join(raw)
    else:
        text = json.dumps(raw, ensure_ascii=False, default=str)
    return text[:SHOWN_MAX]


def _csv_cells(kind: Kind, entry: Entry) -> list[str]:
    match kind:
        case Kind.FOLLOWING:
            flags = (_word(entry.reblogs), _word(entry.notify))
            return [entry.account, *flags, ", ".join(entry.languages)]
        case Kind.MUTES:
            return [entry.account, _word(entry.hide_notifications)]
        case Kind.LISTS:
            return [entry.list_name, entry.account]
    return [entry.account]


def _json_cells(kind: Kind, entry: Entry) -> list[Any]:
    match kind:
        case Kind.FOLLOWING:
            return [entry.account, entry.reblogs, entry.notify, list(entry.languages)]
        case Kind.MUTES:
            return [entry.account, entry.hide_notifications]
        case Kind.LISTS:
            return [entry.list_name, entry.account]
    return [entry.account]


def _entry(kind: Kind, raw: Any, domain: str) -> Entry:
    cells = _cells(kind, raw)
    if kind is Kind.LISTS:
        name = cells[0].strip() if isinstance(cells[0], str) else ""
        if not name:
            raise Malformed("the list name is missing")
        account = _account(cells[1], domain)
        return Entry(account, list_name=name)
    account = _account(cells[0], domain)
    match kind:
        case Kind.FOLLOWING:
            reblogs = _flag(cells[1], "Show boosts", True)
            notify = _flag(cells[2], "Notify on new posts", False)
            return Entry(account, reblogs, notify, _languages(cells[3]))
        case Kind.MUTES:
            return Entry(account, hide_notifications=_flag(cells[1], "Hide notifications", True))
    return Entry(account)


def _cells(kind: Kind, raw: Any) -> list[Any]:
    """The row's fields in the CSV's column order (missing optional ones: None)."""
    width = len(HEADERS[kind])
    if isinstance(raw, dict):
        unknown = set(raw) - set(JSON_FIELDS[kind])
        if unknown:
            raise Malformed(f"unknown fields {sorted(unknown)}; a row has {JSON_FIELDS[kind]}")
        return [raw.get(name) for name in JSON_FIELDS[kind]]
    if not isinstance(raw, list) or not all(isinstance(cell, str) for cell in raw):
        raise Malformed("a row is an object (JSON) or a line of fields (CSV)")
    least = 2 if kind is Kind.LISTS else 1
    if not least <= len(raw) <= width:
        raise Malformed(f"a {kind} row has {least} to {width} fields, this one {len(raw)}")
    return [*raw, *[None] * (width - len(raw))]


def _account(value: Any, domain: str) -> str:
    if not isinstance(value, str):
        raise Malformed("the account address is missing")
    account = value.strip().removeprefix("@")
    user, at, host = account.partition("@")
    if at and host.lower() != domain.lower():
        raise Malformed(
            f"{account!r} is another server's account (this one is {domain or 'local only'})"
        )
    if not is_user_id(user):
        raise Malformed(f"{user!r} is no user id (1-64 characters from [A-Za-z0-9_.-])")
    return user


def _flag(value: Any, name: str, default: bool) -> bool:
    if value is None or value == "":
        return default
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    raise Malformed(f"{name} is true or false, not {str(value)[:20]!r}")


def _languages(value: Any) -> tuple[str, ...]:
    if value is None or value == "":
        return ()
    codes = value if isinstance(value, list) else str(value).split(",")
    found = list(dict.fromkeys(str(code).strip() for code in codes if str(code).strip()))
    for code in found:
        if not LANGUAGE.fullmatch(code):
            raise Malformed(f"{code!r} is no language code (ISO 639)")
    if len(found) > LANGUAGES_MAX:
        raise Malformed(f"at most {LANGUAGES_MAX} languages")
    return tuple(found)


def _word(flag: bool) -> str:
    return "true" if flag else "false"


@dataclass(slots=True)
class ImportRecord:
    """An import as its job records it: what it holds, how far it got, what it refused."""

    id: str
    kind: Kind
    mode: Mode
    rows: int  # the file's data rows
    state: str = "queued"  # queued, running, done
    done: int = 0  # rows handled (applied or refused)
    applied: int = 0  # rows that changed something or were already so
    removed: int = 0  # entries an overwrite removed
    refused: list[Refused] = field(default_factory=list)
    position: int = 0  # the entries its job has handled (its place, kept with its results)

    def as_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "kind": self.kind.value,
            "mode": self.mode.value,
            "rows": self.rows,
            "state": self.state,
            "done": self.done,
            "applied": self.applied,
            "removed": self.removed,
            "position": self.position,
            "refused": [
                {"row": r.row, "value": r.value, "reason": r.reason, "message": r.message}
                for r in self.refused
            ],
        }

    @classmethod
    def of(cls, stored: dict[str, Any]) -> ImportRecord:
        refused = [Refused(**r) for r in stored.get("refused", [])]
        names = ("id", "rows", "state", "done", "applied", "removed", "position")
        fields = {k: stored[k] for k in names}
        return cls(kind=Kind(stored["kind"]), mode=Mode(stored["mode"]), refused=refused, **fields)
