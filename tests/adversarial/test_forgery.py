"""Plan and approval forgery with the existing mechanisms: hand-written approval records,
approvals of other bytes, plans edited after approval, deleted lifecycle records, rewritten
logs, a two-line `active`, extra or hidden gate lines and invisible characters in a plan.

Approvals are always written by the real `harness-gate approve`; a forged record is that
line, mutated (so these tests survive a change of the record format)."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from harness_gate import templates
from tests.adversarial.util import FOLDER, commit, report, staged
from tests.helpers import TREE, Repo, completion_md, plan_sha, review_md

P2 = "harness/plans/p2"
APPROVALS2 = f"{P2}/approvals.jsonl"
PLAN2 = f"{P2}/plan.md"


def _new_approved_plan(repo: Repo) -> None:
    """Plan p2 (`src/**`), approved by the real `approve`, plus a change inside it."""
    repo.new_plan("p2", ("src/**",))
    repo.approve()
    repo.write("src/a.py", "a = 2\n")
    repo.git("add", "-A")
    assert staged(repo) == (0, [])


def _mutate_approval(repo: Repo, edit: Callable[[bytes], bytes]) -> None:
    [line] = repo.read(APPROVALS2).splitlines()
    forged = edit(line)
    assert forged != line
    repo.write(APPROVALS2, forged + b"\n")
    repo.git("add", "-A")


def _reorder(line: bytes) -> bytes:
    obj = json.loads(line)
    return json.dumps(dict(reversed(obj.items())), ensure_ascii=False, separators=(",", ":")).encode()


def _answer(value: bytes) -> Callable[[bytes], bytes]:
    def edit(line: bytes) -> bytes:
        assert b'"answer":"y"' in line
        return line.replace(b'"answer":"y"', b'"answer":' + value)

    return edit


FORGED_RECORDS: dict[str, Callable[[bytes], bytes]] = {
    "spacing": lambda ln: ln.replace(b'":"', b'": "', 1),
    "key-order": _reorder,
    "extra-key": lambda ln: ln[:-1] + b',"via":"hand"}',
    "duplicate-key": lambda ln: b'{"answer":"y",' + ln[1:],
    "answer-Y": _answer(b'"Y"'),
    "answer-yes": _answer(b'"yes"'),
    "answer-true": _answer(b"true"),
    "trailing-space": lambda ln: ln + b" ",
    "crlf": lambda ln: ln + b"\r",
    "escaped-char": lambda ln: ln.replace(b'"answer":"y"', b'"answer":"\\u0079"'),
}


@pytest.mark.parametrize("how", sorted(FORGED_RECORDS))
def test_hand_written_approval_record(gated: Repo, how: str) -> None:
    """The approval line, rewritten by hand in a form `approve` never writes: HG204, and
    the plan is not approved (HG202)."""
    _new_approved_plan(gated)
    _mutate_approval(gated, FORGED_RECORDS[how])
    assert staged(gated) == (1, [("HG202", PLAN2), ("HG204", APPROVALS2)])


def test_approval_of_other_bytes(gated: Repo) -> None:
    """A canonical record whose sha256 names other bytes than plan.md's: stale (HG203)."""
    _new_approved_plan(gated)
    sha = plan_sha(gated, P2)
    _mutate_approval(gated, lambda ln: ln.replace(sha.encode(), b"0" * 64))
    assert staged(gated) == (1, [("HG203", PLAN2)])


def test_committed_plan_edited_after_approval(gated: Repo) -> None:
    """One byte appended to the committed, approved plan.md (and re-approved): HG210."""
    plan = f"{FOLDER}/plan.md"
    gated.write(plan, gated.read(plan) + b"\n")
    gated.write("src/a.py", "a = 3\n")
    gated.git("add", "-A")
    assert staged(gated) == (1, [("HG203", plan), ("HG210", plan)])
    gated.approve()  # approving the new bytes does not make the change legal
    gated.git("add", "-A")
    assert staged(gated) == (1, [("HG210", plan)])


def test_plan_edited_between_approval_and_commit(gated: Repo) -> None:
    """A new plan approved, then widened before its first commit: the lifecycle sees the
    approval is for other bytes (HG203) and grants nothing."""
    _new_approved_plan(gated)
    gated.write(PLAN2, gated.read(PLAN2).replace(b"`src/**`", b"`src/**`\n- `secret/**`"))
    gated.write("secret/x", "now inside?\n")
    gated.git("add", "-A")
    assert staged(gated) == (1, [("HG203", PLAN2)])


def _pause(psha: str) -> str:
    return templates.pause(
        binding={"plan_sha256": psha, "amendment_sha256": None},
        pause={
            "state": "paused_blocked",
            "reason": "waiting for a decision",
            "completed_rounds": 0,
            "remaining_findings": ["F1"],
            "verification_trend": "unavailable",
            "latest_diff": TREE,
            "latest_verification": "a" * 64,
        },
    )


@pytest.mark.parametrize("ending", ["pause", "completion"])
def test_deleting_the_record_that_ended_authority(gated: Repo, ending: str) -> None:
    """A committed Pause Report (after a BLOCKED review) or Completion (after a PASS
    review), deleted or emptied to win write authority back: HG212."""
    psha = plan_sha(gated, FOLDER)
    review, record = f"{FOLDER}/001-review.md", f"{FOLDER}/002-{ending}.md"
    if ending == "pause":
        gated.write(review, review_md(psha, "BLOCKED", ("F1",)))
        gated.write(record, _pause(psha))
    else:
        gated.write(review, review_md(psha, "PASS"))
        gated.write(record, completion_md(gated, FOLDER, psha))
    commit(gated, f"plan p1: {ending}")
    gated.write("src/a.py", "a = 4\n")
    gated.git("add", "-A")
    assert staged(gated) == (1, [("HG209", f"{FOLDER}/plan.md")])  # no authority left
    gated.git("rm", "-q", record)
    paused = [("HG209", f"{FOLDER}/plan.md")] if ending == "pause" else []  # the BLOCKED review still pauses
    assert staged(gated) == (1, [*paused, ("HG212", record)])
    gated.git("rm", "-q", review)
    assert staged(gated) == (1, [("HG212", review), ("HG212", record)])


@pytest.mark.parametrize("cut", ["empty", "half-line", "no-newline"])
def test_truncated_approvals_log(gated: Repo, cut: str) -> None:
    """The committed approvals.jsonl emptied, cut mid-record, or stripped of its newline."""
    log = f"{FOLDER}/approvals.jsonl"
    data = gated.read(log)
    gated.write(log, {"empty": b"", "half-line": data[: len(data) // 2], "no-newline": data[:-1]}[cut])
    gated.git("add", "-A")
    torn = [] if cut == "empty" else [("HG204", log)]  # what is left is no valid record either
    assert staged(gated) == (1, [*torn, ("HG211", log)])


@pytest.mark.parametrize("content", [b"p2\n", b"p1\np2\n", b" p1\n", b"p1\x00\n"], ids=repr)
def test_a_leftover_active_pointer_decides_nothing(gated: Repo, content: bytes) -> None:
    """An `active` file (the shared pointer earlier builds kept) naming a plan that would
    allow the change: it is no artifact (HG516) and points no plan at the change."""
    gated.new_plan("p2", ("secret/**",))
    gated.approve(plan="p2")
    commit(gated, "plan p2, on main: a base plan beside p1")
    gated.write("harness/active", content)
    gated.write("secret/x", "changed\n")
    gated.git("add", "-A")
    code, found = staged(gated)
    assert code == 1
    assert ("HG516", "harness/active") in found
    # Two plans are open on the base and neither is this branch's own: one of them must
    # allow the whole change; p2 does, so only the leftover file blocks.
    assert found == [("HG516", "harness/active")]


# -- the plan's own text ---------------------------------------------------------------------

GATE = "Proceed with this Plan? [y/N]"


def _plan_variant(repo: Repo, edit: Callable[[str], str]) -> tuple[int, list[tuple[str, str]]]:
    """Plan p2 with its text edited before anyone approves it: `lint`'s verdict."""
    repo.new_plan("p2", ("src/**",))
    text = repo.read(PLAN2).decode()
    edited = edit(text)
    assert edited != text
    repo.write(PLAN2, edited)
    doc = report(repo, "lint")
    return doc["exit_code"], sorted({(f["code"], f["path"]) for f in doc["findings"]})


HIDDEN_GATES: dict[str, tuple[Callable[[str], str], set[str]]] = {
    "second-line": (lambda t: t.replace(GATE, f"{GATE}\n{GATE}"), {"HG513"}),
    "only-in-a-comment": (
        lambda t: t.replace(f"## Approval\n\n{GATE}", f"## Approval\n\n<!-- {GATE} -->"),
        {"HG513"},
    ),
    "link-reference-definition": (
        lambda t: t.replace(f"## Approval\n\n{GATE}", f"## Approval\n\n[gate]: <{GATE}>"),
        {"HG514"},
    ),
    "approval-in-a-comment": (
        lambda t: t.replace(f"## Approval\n\n{GATE}", f"<!--\n## Approval\n\n{GATE}\n-->"),
        {"HG503", "HG513"},
    ),
}


@pytest.mark.parametrize("how", sorted(HIDDEN_GATES))
def test_gate_line_doubled_or_hidden(gated: Repo, how: str) -> None:
    """The Approval section must hold exactly the gate line: a second one, or one hidden in
    an HTML comment or a link reference definition, is not it (HG513/HG514)."""
    edit, codes = HIDDEN_GATES[how]
    assert _plan_variant(gated, edit) == (1, sorted((c, PLAN2) for c in codes))
    assert gated.cli("approve", input="y\n").exit_code == 1  # nothing to approve
    assert b"approvals" not in gated.git("ls-files", "-o", P2)


EARLY_GATES: dict[str, Callable[[str], str]] = {
    "in-the-objective": lambda t: t.replace("Do it\n", f"Do it\n\n{GATE}\n"),
    "in-a-comment-before-the-boundary": lambda t: t.replace(
        "## Write Boundary", f"<!-- {GATE} -->\n\n## Write Boundary"
    ),
    "another-kinds-gate": lambda t: t.replace("None identified.", "Proceed with this Repair Resume? [y/N]"),
    "nbsp-spelling": lambda t: t.replace("Do it\n", "Do it\n\nProceed with this\u00a0Plan? [y/N]\n"),
}


@pytest.mark.parametrize("how", sorted(EARLY_GATES))
def test_gate_question_before_the_end_of_the_plan(gated: Repo, how: str) -> None:
    """A gate question before the Write Boundary invites a `y` before the approver has read
    the plan: the gate line appears once, as the plan's last line (HG513)."""
    assert _plan_variant(gated, EARLY_GATES[how]) == (1, [("HG513", PLAN2)])


INVISIBLE: dict[str, Callable[[str], str]] = {
    "bidi-override-in-prose": lambda t: t.replace("Do it", "Do it \u202eonly in tests\u202c"),
    "isolate-in-scope": lambda t: t.replace("Only the paths", "Only \u2067the\u2069 paths"),
    "zero-width-in-risks": lambda t: t.replace("None identified.", "None\u200b identified."),
    "escape-sequence": lambda t: t.replace("Do it", "Do it\x1b[8m hidden\x1b[0m"),
}


@pytest.mark.parametrize("how", sorted(INVISIBLE))
def test_invisible_or_reordering_characters_in_a_plan(gated: Repo, how: str) -> None:
    """Bidirectional overrides, zero-width characters or terminal escapes make the plan an
    approver reads differently from the bytes an agent follows: HG510."""
    assert _plan_variant(gated, INVISIBLE[how]) == (1, [("HG510", PLAN2)])


@pytest.mark.parametrize(
    ("how", "code"),
    [("`src/**\u202e`", "HG510"), ("`src\u200b/**`", "HG510"), ("`src/**`\n<!--\n- `secret/**`\n-->", "HG514")],
)
def test_hidden_or_invisible_boundary_patterns(gated: Repo, how: str, code: str) -> None:
    """A boundary pattern with an invisible character, or one hidden in a comment."""
    assert _plan_variant(gated, lambda t: t.replace("`src/**`", how)) == (1, [(code, PLAN2)])
