"""Where a rule code links: docs/rules.md of the harness-gate that runs, or nowhere.

A report's `rule_url` and SARIF's `helpUri` must open the rule's text for the version
that wrote them, so the page is chosen from what is known about this run, first match
wins (docs/report.md, "Rule links"):

1. `HARNESS_GATE_RULES_URL`: the rules page, set by whoever runs the gate (a mirror, an
   internal docs site); anchors `#hg101` are appended.
2. In the Action: the Action's own repository at the ref the workflow pinned, as the
   runner names them. action.yml hands them over as HG_ACTION_* variables, because a
   composite action's steps see `GITHUB_ACTION_REPOSITORY` and `GITHUB_ACTION_REF` empty
   (actions/runner#2473); both are empty for `uses: ./` too, which has no ref to link.
3. The installed package's metadata: its `Source` project URL (pyproject's
   `[project.urls]`) at the tag `v<version>`.
4. No link at all: a report never carries a placeholder or a guess.

A value that is not a plain https address (a space, a control character, a fragment, a
template's stand-in owner) is not used: a configured one that is refused gives no
link rather than falling back to another page.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass

from harness_gate import __version__
from harness_gate.findings import RULES, rule_anchor

RULES_URL_ENV = "HARNESS_GATE_RULES_URL"
ACTION_REPOSITORY_ENV = "HG_ACTION_REPOSITORY"
ACTION_REF_ENV = "HG_ACTION_REF"
SERVER_URL_ENV = "HG_SERVER_URL"
RULES_PATH = "docs/rules.md"
_MAX_URL = 2048
# An https address without a fragment, spaces, controls or quotes (it lands in Markdown too).
_HTTPS = re.compile(r"https://[A-Za-z0-9.-]+(?::[0-9]{1,5})?(?:/[A-Za-z0-9._~!$&'()*+,;=:@%/-]*)?(?:\?[^#\s\"<>`]*)?")
_SERVER = re.compile(r"https://[A-Za-z0-9.-]+(?::[0-9]{1,5})?")
_REPOSITORY = re.compile(r"[A-Za-z0-9][A-Za-z0-9-]{0,38}/[A-Za-z0-9._-]{1,100}")
# A branch, a tag or a commit as a workflow's `uses:` names it, never `..` nor a leading `-`.
_REF = re.compile(r"(?!.*\.\.)[A-Za-z0-9_][A-Za-z0-9._/-]{0,254}")
# Owners no published repository is: the templates' stand-ins.
_PLACEHOLDER_OWNERS = frozenset({"owner", "user", "username", "org", "organization", "your-org", "you", "example"})


@dataclass(frozen=True)
class RuleLinks:
    """The rules page (anchors appended) and the project's home, each None when unknown."""

    rules_page: str | None
    home: str | None = None

    def rule_url(self, code: str) -> str | None:
        """The rule's anchor; None without a page, or for a code the catalogue does not hold."""
        if self.rules_page is None or code not in RULES:
            return None
        return f"{self.rules_page}#{rule_anchor(code)}"


NO_LINKS = RuleLinks(None, None)


def is_placeholder(url: str) -> bool:
    """A template's address (its owner a stand-in, _PLACEHOLDER_OWNERS), not a real one."""
    parts = url.split("/")
    return len(parts) > 3 and parts[3].lower() in _PLACEHOLDER_OWNERS


def _https(url: str) -> bool:
    return len(url) <= _MAX_URL and _HTTPS.fullmatch(url) is not None and not is_placeholder(url)


def _repository_links(server: str, repository: str, ref: str) -> RuleLinks:
    home = f"{server.rstrip('/')}/{repository}"
    if _SERVER.fullmatch(server.rstrip("/")) is None or _REPOSITORY.fullmatch(repository) is None:
        return NO_LINKS
    if _REF.fullmatch(ref) is None or is_placeholder(home):
        return NO_LINKS
    return RuleLinks(f"{home}/blob/{ref}/{RULES_PATH}", home)


def from_metadata(project_urls: list[str], version: str) -> RuleLinks:
    """The links a package's `Project-URL` entries (`Source, https://github.com/o/r`) give:
    a GitHub repository's rules page at the release tag."""
    for entry in project_urls:
        label, _, url = entry.partition(",")
        url = url.strip().removesuffix(".git").rstrip("/")
        if label.strip().lower() != "source" or not _https(url):
            continue
        m = re.fullmatch(r"(https://github\.com)/([^/]+/[^/]+)", url)
        if m is None:  # another forge lays files out differently: configure the URL instead
            return NO_LINKS
        return _repository_links(m[1], m[2], f"v{version}")
    return NO_LINKS


@functools.cache
def _installed() -> RuleLinks:
    # Read once per process and only when a report links a rule: importlib.metadata costs
    # a few milliseconds the hook path does not pay.
    from importlib import metadata  # noqa: PLC0415  (lazy: start-up time)

    try:
        urls = metadata.metadata("harness-gate").get_all("Project-URL") or []
    except metadata.PackageNotFoundError:  # run from a source tree without an install
        return NO_LINKS
    return from_metadata([str(u) for u in urls], __version__)


def resolve(environ: Mapping[str, str] | None = None) -> RuleLinks:
    """The links of this run (the order of the module's docstring)."""
    env = os.environ if environ is None else environ
    configured = env.get(RULES_URL_ENV, "").strip()
    if configured:
        return RuleLinks(configured, None) if _https(configured) and "#" not in configured else NO_LINKS
    repository = env.get(ACTION_REPOSITORY_ENV, "")
    ref = env.get(ACTION_REF_ENV, "")
    if repository and ref:
        return _repository_links(env.get(SERVER_URL_ENV, "") or "https://github.com", repository, ref)
    return _installed()
