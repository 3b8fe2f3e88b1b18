"""The Action installs from a hash-locked lock file made by one documented command, and
the lock satisfies what pyproject.toml asks (docs/action.md, "The install")."""

from __future__ import annotations

import re
import sys
from pathlib import Path

from packaging.markers import default_environment
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

PROJECT = Path(__file__).resolve().parent.parent
LOCK = PROJECT / "action-requirements.txt"
COMMAND = (
    "uv pip compile action-requirements.in --universal --python-version 3.10 --generate-hashes "
    "--no-emit-package harness-gate -o action-requirements.txt"
)
SUPPORTED = ("3.10", "3.11", "3.12", "3.13")
PIN = re.compile(r"^([A-Za-z0-9._-]+)==([^ ;\\]+)(?: ; (.+?))? \\$")


def pins() -> list[tuple[str, Version, str | None, int]]:
    """(name, version, marker, number of hashes) of each entry of the lock."""
    out: list[tuple[str, Version, str | None, int]] = []
    for line in LOCK.read_text("utf-8").splitlines():
        m = PIN.match(line)
        if m:
            out.append((canonicalize_name(m.group(1)), Version(m.group(2)), m.group(3), 0))
        elif line.strip().startswith("--hash=sha256:"):
            name, version, marker, hashes = out[-1]
            out[-1] = (name, version, marker, hashes + 1)
        else:
            assert not line.strip() or line.lstrip().startswith("#"), f"an entry the test cannot read: {line!r}"
    return out


def installed_on(python: str) -> dict[str, Version]:
    """What pip installs from the lock on that Python (the entries whose markers hold)."""
    env = {**default_environment(), "python_version": python, "python_full_version": f"{python}.0"}
    chosen: dict[str, Version] = {}
    for name, version, marker, _ in pins():
        if marker is None or Requirement(f"x ; {marker}").marker.evaluate(env):  # type: ignore[union-attr]
            assert name not in chosen, f"two versions of {name} on Python {python}"
            chosen[name] = version
    return chosen


def test_the_lock_is_made_by_the_documented_command() -> None:
    text = LOCK.read_text("utf-8")
    assert f"#    {COMMAND}\n" in text
    page = (PROJECT / "docs" / "action.md").read_text("utf-8").replace("\\\n  ", "")
    assert COMMAND in page
    lines = {ln.strip() for ln in (PROJECT / "action-requirements.in").read_text("utf-8").splitlines()}
    assert {".", "setuptools>=77"} <= lines, "the project itself and its build requirement are locked"


def test_every_entry_is_pinned_with_hashes() -> None:
    entries = pins()
    assert entries
    assert all(hashes > 0 for *_, hashes in entries), [e for e in entries if e[3] == 0]
    assert "harness-gate" not in {name for name, *_ in entries}  # its own code is the action's checkout


def test_the_lock_satisfies_every_dependency_and_the_build_on_every_supported_python() -> None:
    """A dependency added to pyproject.toml, or a floor raised, fails here until re-locked."""
    meta = tomllib.loads((PROJECT / "pyproject.toml").read_text("utf-8"))
    wanted = [Requirement(r) for r in (*meta["project"]["dependencies"], *meta["build-system"]["requires"])]
    for python in SUPPORTED:
        chosen = installed_on(python)
        env = {**default_environment(), "python_version": python, "python_full_version": f"{python}.0"}
        for req in wanted:
            if req.marker is not None and not req.marker.evaluate(env):
                continue
            name = canonicalize_name(req.name)
            assert name in chosen, f"{req} is not in the lock for Python {python}: re-lock with `{COMMAND}`"
            assert req.specifier.contains(chosen[name], prereleases=True), (
                f"the lock's {name}=={chosen[name]} does not satisfy {req} (Python {python}): re-lock with `{COMMAND}`"
            )


def test_the_action_installs_from_the_lock_with_hashes_then_its_own_code_alone() -> None:
    import yaml  # pre-commit's own dependency

    action = yaml.safe_load((PROJECT / "action.yml").read_text("utf-8"))
    [step] = [s for s in action["runs"]["steps"] if s["name"] == "Install harness-gate"]
    commands = [" ".join(c.split()) for c in step["run"].replace("\\\n", " ").splitlines() if "pip install" in c]
    assert len(commands) == 2, commands
    assert "--require-hashes" in commands[0] and '-r "$GITHUB_ACTION_PATH/action-requirements.txt"' in commands[0]
    assert "--no-deps --no-build-isolation" in commands[1] and commands[1].endswith('"$GITHUB_ACTION_PATH"')
