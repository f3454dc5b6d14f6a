"""What a follower asks of one follow: a bell for the author's posts (``notify``), the author's
reblogs in its home timeline or not (``reblogs``), and the languages of the author's posts it
wants there (``languages``; none: every language).

They belong to the follower alone, as Mastodon's ``showing_reblogs``, ``notifying`` and
``languages`` do: only the follower's own relationships answer shows them. A follow request
carries them too, and its approval keeps them. A repeated follow changes the ones it names and
leaves the others: ``OptionEdits`` is such a partial change, ``FollowOptions`` what an edge
carries once it is applied.

Languages are ISO 639 codes (two or three lowercase letters), as a post's own ``language``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from graphsvc.domain.errors import InvalidOptions

LANGUAGE = re.compile(r"[a-z]{2,3}")
LANGUAGES_MAX = 16  # a follow's languages; more is no filter any reader needs


@dataclass(frozen=True, slots=True)
class FollowOptions:
    """A follow's options in effect; the defaults are a new follow's."""

    notify: bool = False
    reblogs: bool = True
    languages: tuple[str, ...] = ()  # empty: every language

    @property
    def filters(self) -> bool:
        """Whether they keep some of the author's posts out of the follower's home timeline."""
        return not self.reblogs or bool(self.languages)

    def admits(self, language: str | None, reblog: bool) -> bool:
        """Whether a post of the author with this language and kind reaches the follower's home
        timeline. A post without a language passes every language filter (as Mastodon's
        does): the author did not say, and hiding it would hide most posts."""
        if reblog and not self.reblogs:
            return False
        return not self.languages or language is None or language in self.languages


@dataclass(frozen=True, slots=True)
class OptionEdits:
    """The options a follow names; None leaves an option as it is (a new follow: the
    default). ``languages=()`` sets every language again."""

    notify: bool | None = None
    reblogs: bool | None = None
    languages: tuple[str, ...] | None = None


def encode_filter(options: FollowOptions) -> str:
    """The compact form a follow's filter is cached in: ``reblogs|languages`` (``1|en,de``)."""
    return f"{int(options.reblogs)}|{','.join(options.languages)}"


def decode_filter(value: str) -> FollowOptions:
    reblogs, _, languages = value.partition("|")
    return FollowOptions(
        reblogs=reblogs == "1", languages=tuple(filter(None, languages.split(",")))
    )


DEFAULT = FollowOptions()  # frozen: shared as every default
NO_EDITS = OptionEdits()


def parse_languages(raw: str | None) -> tuple[str, ...] | None:
    """A comma-separated list of languages as a query gives it (``""``: every language, None:
    not given), each once, in the order given (an export writes them back so); 422
    ``invalid_options`` naming the first bad one."""
    if raw is None:
        return None
    codes = [code for code in raw.split(",") if code] if raw else []
    for code in codes:
        validate_language(code, "languages item")
    unique = tuple(dict.fromkeys(codes))
    if len(unique) > LANGUAGES_MAX:
        raise InvalidOptions(f"languages names {len(unique)} languages; at most {LANGUAGES_MAX}")
    return unique


def validate_language(code: str, name: str = "language") -> None:
    if not LANGUAGE.fullmatch(code):
        raise InvalidOptions(
            f"{name} {code!r} is no language code: two or three lowercase letters (ISO 639)"
        )
