"""Where rule links point (harness_gate/rule_links.py): the rules page of the version that
ran, or no link at all; never a placeholder."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness_gate import rule_links
from harness_gate.rule_links import NO_LINKS, RuleLinks, from_metadata, resolve
from tests.helpers import Repo

PACKAGE = Path(rule_links.__file__).resolve().parent
PLACEHOLDERS = ("OWNER/", "/OWNER", "USER/harness-gate", "your-org/")


def test_the_configured_page_comes_first() -> None:
    env = {
        "HARNESS_GATE_RULES_URL": "https://docs.example.org/gate/rules/",
        "HG_ACTION_REPOSITORY": "acme/harness-gate",
        "HG_ACTION_REF": "v1",
    }
    links = resolve(env)
    assert links == RuleLinks("https://docs.example.org/gate/rules/", None)
    assert links.rule_url("HG101") == "https://docs.example.org/gate/rules/#hg101"
    assert links.rule_url("HG000") is None  # not in the catalogue


@pytest.mark.parametrize(
    "configured",
    [
        "http://docs.example.org/rules.md",  # not https
        "https://docs.example.org/rules.md#top",  # a fragment of its own
        "https://docs.example.org/a b",
        "https://docs.example.org/\x1b[31m",
        "https://github.com/OWNER/harness-gate/blob/main/docs/rules.md",  # the template's
        "javascript:alert(1)",
        "https://" + "a" * 3000,
    ],
)
def test_a_refused_configured_page_gives_no_link_not_another(configured: str) -> None:
    env = {"HARNESS_GATE_RULES_URL": configured, "HG_ACTION_REPOSITORY": "acme/harness-gate", "HG_ACTION_REF": "v1"}
    assert resolve(env) == NO_LINKS


def test_in_the_action_the_actions_own_repository_and_ref() -> None:
    env = {
        "HG_ACTION_REPOSITORY": "acme/harness-gate",
        "HG_ACTION_REF": "v1.2.3",
        "HG_SERVER_URL": "https://ghe.example.com",
    }
    links = resolve(env)
    assert links.rule_url("HG302") == "https://ghe.example.com/acme/harness-gate/blob/v1.2.3/docs/rules.md#hg302"
    assert links.home == "https://ghe.example.com/acme/harness-gate"
    sha = "0123456789abcdef0123456789abcdef01234567"
    assert resolve({"HG_ACTION_REPOSITORY": "acme/harness-gate", "HG_ACTION_REF": sha}).rules_page == (
        f"https://github.com/acme/harness-gate/blob/{sha}/docs/rules.md"
    )


@pytest.mark.parametrize(
    ("repository", "ref", "server"),
    [
        ("acme/harness-gate", "../../evil", "https://github.com"),
        ("acme/harness-gate", "-x", "https://github.com"),
        ("acme/harness gate", "v1", "https://github.com"),
        ("OWNER/harness-gate", "v1", "https://github.com"),
        ("acme/harness-gate", "v1", "http://github.com"),
        ("acme/harness-gate", "v1", "https://github.com/x#"),
    ],
)
def test_an_action_context_that_is_not_plain_gives_no_link(repository: str, ref: str, server: str) -> None:
    env = {"HG_ACTION_REPOSITORY": repository, "HG_ACTION_REF": ref, "HG_SERVER_URL": server}
    assert resolve(env) == NO_LINKS


def test_uses_dot_slash_falls_back_to_the_installed_package(monkeypatch: pytest.MonkeyPatch) -> None:
    """`uses: ./` has no repository and no ref: the package's metadata decides."""
    installed = RuleLinks(
        "https://github.com/acme/harness-gate/blob/v0.1.0/docs/rules.md", "https://github.com/acme/harness-gate"
    )
    monkeypatch.setattr(rule_links, "_installed", lambda: installed)
    assert (
        resolve({"HG_ACTION_REPOSITORY": "", "HG_ACTION_REF": "", "HG_SERVER_URL": "https://github.com"}) == installed
    )
    assert resolve({}) == installed


def test_the_metadata_source_at_the_release_tag() -> None:
    urls = ["Documentation, https://acme.github.io/harness-gate/", "Source, https://github.com/acme/harness-gate.git"]
    assert from_metadata(urls, "1.4.0").rules_page == "https://github.com/acme/harness-gate/blob/v1.4.0/docs/rules.md"
    assert from_metadata(["source , https://github.com/acme/harness-gate/"], "1.4.0").home == (
        "https://github.com/acme/harness-gate"
    )


@pytest.mark.parametrize(
    "urls",
    [
        [],
        ["Homepage, https://github.com/acme/harness-gate"],  # not the source
        ["Source, https://github.com/OWNER/harness-gate"],  # a placeholder
        ["Source, https://gitlab.com/acme/harness-gate"],  # another forge's layout
        ["Source, http://github.com/acme/harness-gate"],
        ["Source, https://github.com/acme/harness-gate/tree/main"],
    ],
)
def test_metadata_without_a_usable_source_gives_no_link(urls: list[str]) -> None:
    assert from_metadata(urls, "1.0.0") == NO_LINKS


def test_the_package_holds_no_placeholder_address() -> None:
    for path in PACKAGE.rglob("*"):
        if path.suffix in (".py", ".json"):
            text = path.read_text(encoding="utf-8")
            assert not any(p in text for p in PLACEHOLDERS), path


def test_no_output_ever_holds_a_placeholder(repo: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = repo.new_plan()
    plan = repo.path / folder / "plan.md"
    plan.write_text(plan.read_text() + "\n## Extra\n")  # a finding: HG504
    for env in (
        {},  # the installed package decides
        {"HG_ACTION_REPOSITORY": "", "HG_ACTION_REF": "", "HG_SERVER_URL": "https://github.com"},  # uses: ./
        {"HARNESS_GATE_RULES_URL": "https://github.com/OWNER/harness-gate/blob/main/docs/rules.md"},
        {"HG_ACTION_REPOSITORY": "OWNER/harness-gate", "HG_ACTION_REF": "main"},
    ):
        with monkeypatch.context() as m:
            for name, value in env.items():
                m.setenv(name, value)
            for fmt in ("text", "json", "sarif"):
                res = repo.cli("lint", "--format", fmt)
                assert res.exit_code == 1, res.output
                assert not any(p in res.output for p in PLACEHOLDERS), (env, res.output[:400])
            doc = json.loads(repo.cli("lint", "--format", "json").output)
            assert doc["findings"], doc
            for finding in doc["findings"]:
                url = finding["rule_url"]
                assert url is None or url.startswith("https://"), url
