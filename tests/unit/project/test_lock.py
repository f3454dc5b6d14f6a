"""requirements.lock, which every install resolves from, still satisfies pyproject.toml: each
dependency of the package and of each extra is pinned there at a version its specifier
allows (`make lock` re-resolves it after a change)."""

from __future__ import annotations

import tomllib

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

from tests.support.paths import ROOT

PIN = "=="


def locked() -> dict[str, list[Version]]:
    """Each pinned name's versions (a universal lock may pin two, under exclusive markers)."""
    pins: dict[str, list[Version]] = {}
    for line in (ROOT / "requirements.lock").read_text().splitlines():
        if not line or line[0] in " #-":
            continue
        name, _, version = line.split(";")[0].rstrip(" \\").partition(PIN)
        pins.setdefault(canonicalize_name(name), []).append(Version(version))
    return pins


def test_the_lock_pins_every_requirement_at_an_allowed_version() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    wanted = [*project["dependencies"]]
    for extra in project["optional-dependencies"].values():
        wanted += extra
    pins = locked()
    for text in wanted:
        req = Requirement(text)
        if canonicalize_name(req.name) == canonicalize_name(project["name"]):
            continue  # an extra that names another (`notebook` takes `client`'s)
        versions = pins.get(canonicalize_name(req.name))
        assert versions, f"{req.name} is not in requirements.lock: run `make lock`"
        for version in versions:
            assert req.specifier.contains(version, prereleases=True), (
                f"requirements.lock pins {req.name} {version}, outside {req.specifier}: "
                "run `make lock`"
            )


def test_the_lock_is_past_the_published_advisories() -> None:
    floors = {"starlette": "0.49.1", "h11": "0.16", "tqdm": "4.66.3"}
    pins = locked()
    for name, floor in floors.items():
        assert pins[name] and min(pins[name]) >= Version(floor), (name, pins[name])
