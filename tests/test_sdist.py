"""The sdist is the project whole: what its tests read is in it, and its tests pass from
it (a packager's `python -m pytest` in the unpacked sdist). MANIFEST.in says what goes in."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

PROJECT = Path(__file__).resolve().parent.parent
# Left behind by a build or a test run; never part of the project.
NOT_SOURCE = shutil.ignore_patterns(
    ".git", "__pycache__", "*.egg-info", "build", "dist", ".*_cache", ".hypothesis", ".coverage*", "htmlcov"
)


@pytest.fixture(scope="module")
def unpacked(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sdist built from a copy of the project (the build writes egg-info beside its
    sources) with the PEP 517 backend the project names, unpacked."""
    work = tmp_path_factory.mktemp("sdist")
    source = work / "source"
    shutil.copytree(PROJECT, source, ignore=NOT_SOURCE, symlinks=True)
    build = "import sys; from setuptools import build_meta; print(build_meta.build_sdist(sys.argv[1]))"
    out = subprocess.run(
        [sys.executable, "-c", build, str(work)], cwd=source, capture_output=True, text=True, check=False, timeout=300
    )
    assert out.returncode == 0, out.stderr
    name = out.stdout.strip().splitlines()[-1]
    with tarfile.open(work / name) as tar:
        tar.extractall(work / "unpacked", filter="data")
    (top,) = (work / "unpacked").iterdir()
    return top


@pytest.mark.slow
@pytest.mark.integration
def test_the_sdist_holds_every_file_of_the_project(unpacked: Path) -> None:
    if not (PROJECT / ".git").exists():
        pytest.skip("not a git checkout: no list of the project's files to compare with")
    tracked = subprocess.run(["git", "ls-files", "-z"], cwd=PROJECT, capture_output=True, check=True).stdout
    files = {p for p in tracked.decode().split("\0") if p and (PROJECT / p).is_file()}
    shipped = {p.relative_to(unpacked).as_posix() for p in unpacked.rglob("*") if p.is_file()}
    assert files - shipped == set()
    assert not {p for p in shipped if "__pycache__" in p or p.endswith((".pyc", ".coverage"))}


@pytest.mark.slow
@pytest.mark.integration
def test_tests_run_from_the_unpacked_sdist(unpacked: Path) -> None:
    """A few tests that read the project's own files (docs, the hook manifest, the corpus,
    conftest's fixtures), run from the sdist: its code and its files, not this checkout's."""
    tests = [
        "tests/test_docs.py",
        "tests/test_corpus.py",
        "tests/test_editor.py::test_every_schema_has_an_absolute_id_of_its_own",
        "tests/test_precommit.py::test_the_manifest_and_inits_configuration_come_from_one_definition",
    ]
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-n", "0", "-p", "no:cacheprovider", *tests],
        cwd=unpacked,
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    assert " passed" in run.stdout and "failed" not in run.stdout and "error" not in run.stdout.lower()
    # The run imported the sdist's package (`python -m` puts the working directory first).
    probe = subprocess.run(
        [sys.executable, "-c", "import harness_gate; print(harness_gate.__file__)"],
        cwd=unpacked,
        capture_output=True,
        text=True,
        check=True,
    )
    assert Path(probe.stdout.strip()).is_relative_to(unpacked)
