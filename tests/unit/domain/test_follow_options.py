"""A follow's options as plain values: which posts they admit, their cached form, and the
languages a query may name."""

from __future__ import annotations

import pytest

from graphsvc.domain.errors import InvalidOptions
from graphsvc.domain.follow_options import (
    LANGUAGES_MAX,
    FollowOptions,
    decode_filter,
    encode_filter,
    parse_languages,
)


def test_the_defaults_admit_every_post() -> None:
    options = FollowOptions()
    assert not options.filters
    assert all(options.admits(lang, reblog) for lang in (None, "en") for reblog in (False, True))


def test_reblogs_off_keeps_reblogs_out_and_nothing_else() -> None:
    options = FollowOptions(reblogs=False)
    assert options.filters
    assert not options.admits(None, True) and not options.admits("en", True)
    assert options.admits("en", False) and options.admits(None, False)


def test_languages_keep_posts_in_them_and_posts_without_one() -> None:
    options = FollowOptions(languages=("de", "en"))
    assert options.admits("en", False) and options.admits(None, False)
    assert not options.admits("fr", False)


@pytest.mark.parametrize(
    "options",
    [FollowOptions(reblogs=False), FollowOptions(languages=("de", "en")), FollowOptions()],
)
def test_the_cached_form_round_trips_what_filters(options: FollowOptions) -> None:
    assert decode_filter(encode_filter(options)) == options


def test_languages_parse_sorted_and_once() -> None:
    assert parse_languages(None) is None  # not named: left as it is
    assert parse_languages("") == ()  # every language
    assert parse_languages("en,de,en") == ("en", "de")
    assert parse_languages("gsw") == ("gsw",)


@pytest.mark.parametrize("raw", ["EN", "e", "engl", "en;de", "en, de"])
def test_a_bad_language_is_named(raw: str) -> None:
    with pytest.raises(InvalidOptions, match="no language code"):
        parse_languages(raw)


def test_too_many_languages_are_refused() -> None:
    codes = [f"a{chr(97 + i)}" for i in range(LANGUAGES_MAX + 1)]
    assert len(parse_languages(",".join(codes[:-1])) or ()) == LANGUAGES_MAX
    with pytest.raises(InvalidOptions, match="at most"):
        parse_languages(",".join(codes))
