"""Recommendation ids and the online figures, with no server: an id says what it was issued
with, and any id not issued to the user by this service's secret is refused naming the field;
online precision is follows per item shown and per item served."""

from __future__ import annotations

import base64
from dataclasses import replace
from hashlib import sha256

import pytest
from itsdangerous import Signer

from graphsvc.domain.cursor import CursorCodec
from graphsvc.domain.errors import InvalidRecommendationId
from graphsvc.domain.ranker.online_figures import VersionFigures, figures
from graphsvc.domain.recommendation_ids import (
    ID_MOST,
    SERVED_MOST,
    Recommendation,
    RecommendationCodec,
    named_version,
)

SECRET = "a-test-secret-of-enough-length"
CODEC = RecommendationCodec(SECRET)
ISSUED = Recommendation(version=3, user_id="alice.1", issued_ms=1_795_000_000_123)


def test_an_id_says_the_version_the_user_and_when() -> None:
    token = CODEC.encode(ISSUED)
    assert CODEC.decode(token, "alice.1") == ISSUED
    assert len(token) < ID_MOST
    assert set(token) <= set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.")


def test_the_version_an_id_names_is_read_without_the_secret() -> None:
    """What an evaluation reads of another service's answers; a malformed id is refused."""
    token = RecommendationCodec("another-secret-of-enough-length").encode(ISSUED)
    assert named_version(token) == 3
    with pytest.raises(InvalidRecommendationId, match="malformed"):
        named_version("bm90LWFuLWlk.sig")


def test_an_id_counts_only_for_the_users_its_answer_served() -> None:
    served = [f"fof.{n}" for n in range(10)]
    token = CODEC.encode(replace(ISSUED, served=CODEC.digests(served)))
    found = CODEC.decode(token, "alice.1")
    assert all(CODEC.served(found, user) for user in served)
    assert not any(CODEC.served(found, user) for user in ("fof.10", "alice.1", "Fof.1", ""))
    assert not CODEC.served(CODEC.decode(CODEC.encode(ISSUED), "alice.1"), "fof.1")
    other = RecommendationCodec("another-secret-of-enough-length")
    assert not other.digests(served) & found.served  # keyed: no secret, no matching digest


def test_the_largest_id_fits_its_bound() -> None:
    user = "u" * 64
    biggest = Recommendation(10**18 - 1, user, 10**18 - 1)
    served = CODEC.digests(f"{n:064d}" for n in range(SERVED_MOST))
    token = CODEC.encode(replace(biggest, served=served))
    assert len(token) <= ID_MOST
    assert CODEC.decode(token, user).served == served


def test_an_id_of_the_first_format_is_read_and_counts_for_no_one() -> None:
    body = base64.urlsafe_b64encode(b"1|3|1795000000123|alice.1").rstrip(b"=")
    signer = Signer(  # as ids of the first format were signed
        SECRET, salt="graphsvc.recommendation", key_derivation="hmac", digest_method=sha256
    )
    token = signer.sign(body).decode()
    assert CODEC.decode(token, "alice.1") == ISSUED
    assert not CODEC.served(ISSUED, "fof.1")


@pytest.mark.parametrize(
    "token", ["", "abc", "abc.", ".abc", "!!!.###", "a.b.c", "é.é", "x" * 300, "x." * 300]
)
def test_a_malformed_id_is_refused_naming_the_field(token: str) -> None:
    with pytest.raises(InvalidRecommendationId, match=r"^recommendation_id "):
        CODEC.decode(token, "alice.1")


def test_an_edited_id_is_refused() -> None:
    body, mac = CODEC.encode(ISSUED).split(".")
    payload = base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)).replace(b"|3|", b"|4|")
    edited = base64.urlsafe_b64encode(payload).rstrip(b"=").decode()
    with pytest.raises(InvalidRecommendationId, match="signature does not match"):
        CODEC.decode(f"{edited}.{mac}", "alice.1")


def test_an_id_is_bound_to_its_user_its_secret_and_its_salt() -> None:
    token = CODEC.encode(ISSUED)
    with pytest.raises(InvalidRecommendationId, match="another user than 'bob'"):
        CODEC.decode(token, "bob")
    with pytest.raises(InvalidRecommendationId, match="signature does not match"):
        RecommendationCodec("another-secret-of-enough-length").decode(token, "alice.1")
    cursor = CursorCodec(SECRET).encode_at("alice.1", 3, "alice.1")  # the same secret
    with pytest.raises(InvalidRecommendationId, match="signature does not match"):
        CODEC.decode(cursor, "alice.1")


def test_an_id_expires_after_its_time_to_live() -> None:
    ttl = 60_000
    assert not ISSUED.expired(ISSUED.issued_ms + ttl, ttl)
    assert ISSUED.expired(ISSUED.issued_ms + ttl + 1, ttl)
    assert not ISSUED.expired(ISSUED.issued_ms - 5_000, ttl)  # another process's clock ahead


def test_online_precision_is_follows_per_item_shown_and_served() -> None:
    found = figures(
        {0: {"answers": 2, "items": 20, "shown": 8, "follows": 2}, 4: {"answers": 1}},
        {4: 0.31, 2: 0.2},
    )
    assert [f.version for f in found] == [0, 2, 4]
    v0, v2, v4 = found
    assert (v0.precision_shown, v0.precision_served) == (0.25, 0.1)
    assert v0.offline_precision_at_10 is None
    assert v2 == VersionFigures(2, offline_precision_at_10=0.2)  # stored, never served
    assert (v4.precision_shown, v4.precision_served) == (None, None)  # nothing shown yet
    assert v4.as_json() == {
        "version": 4,
        "answers": 1,
        "items": 0,
        "shown": 0,
        "follows": 0,
        "dismissals": 0,
        "precision_shown": None,
        "precision_served": None,
        "offline_precision_at_10": 0.31,
    }
