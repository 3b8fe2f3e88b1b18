"""Every git question harness-gate asks goes through this package; its names, in one place.

`process` starts git (the one way, the hardened environment, the failure report, the
prefetch contract); `repo` finds the repository; `objects` reads objects by id or name;
`trees` lists trees; `index` reads the index and builds the trees the index or the work
tree would commit; `diff` says what changed; `provenance` says where commits come from.
"""

from __future__ import annotations

from harness_gate.change import NO_MODE, Change
from harness_gate.git.diff import (
    DIFF_FLAGS,
    ZERO_OIDS,
    changed_paths,
    changes_between,
    merge_dropped,
    merge_result,
    parse_raw,
    prefetch_staged,
    staged_changes,
    tree_changes,
    tree_patch_chunks,
)
from harness_gate.git.index import (
    LFS_STANDARD,
    dirty_submodules,
    hidden_edits,
    index_entries,
    index_file,
    index_tree,
    listed_files,
    prefetch_index_entries,
    prefetch_status_records,
    status_paths,
    status_records,
    symlinks,
    tracked_files,
    tree_without_paths,
    unmerged_paths,
    unstorable,
    untracked_files,
    verify_index,
    worktree_tree,
)
from harness_gate.git.objects import (
    commit_exists,
    commit_tree,
    empty_tree,
    has_path,
    has_tree,
    head,
    peeled_commit,
    prefetch_paths,
    read_blobs,
    read_blobs_capped,
    read_paths,
    regular_file,
    resolve,
)
from harness_gate.git.process import (
    GitNotRunnable,
    act,
    discard_started,
    run,
    run_status,
    start,
)
from harness_gate.git.provenance import (
    BRANCH_COMMITS_LIMIT,
    Blame,
    Commit,
    Signature,
    base_refs,
    blame,
    branch_setting,
    branch_tips,
    commits,
    configured_base,
    current_branch,
    default_base,
    fork_point,
    is_ancestor,
    is_root_commit,
    is_shallow,
    last_change,
    merge_base,
    parents,
    prefetch_branch_commits,
    prefetch_commits,
    reachable_from,
    remote_has_branches,
    root_commits,
    set_branch_setting,
    shallow_commits,
    signatures,
    subjects,
)
from harness_gate.git.repo import Location, ident, locate, locate_git_dir, merge_heads, toplevel
from harness_gate.git.trees import Blob, prefetch_tree_entries, tree_entries, tree_without
from harness_gate.plumbing import NO_GRAFTS

__all__ = [
    "BRANCH_COMMITS_LIMIT", "DIFF_FLAGS", "LFS_STANDARD", "NO_GRAFTS", "NO_MODE", "ZERO_OIDS", "Blame", "Blob",
    "Change", "Commit", "GitNotRunnable", "Location", "Signature", "act", "base_refs", "blame", "branch_setting",
    "branch_tips", "changed_paths", "changes_between", "commit_exists", "commit_tree", "commits", "configured_base",
    "current_branch", "default_base", "dirty_submodules", "discard_started", "empty_tree", "fork_point", "has_path",
    "has_tree", "head", "hidden_edits", "ident", "index_entries", "index_file", "index_tree", "is_ancestor",
    "is_root_commit", "is_shallow", "last_change", "listed_files", "locate", "locate_git_dir", "merge_base",
    "merge_dropped", "merge_heads", "merge_result", "parents", "parse_raw", "peeled_commit", "prefetch_branch_commits",
    "prefetch_commits", "prefetch_index_entries", "prefetch_paths", "prefetch_staged", "prefetch_status_records",
    "prefetch_tree_entries", "reachable_from", "read_blobs", "read_blobs_capped", "read_paths", "regular_file",
    "remote_has_branches", "resolve", "root_commits", "run", "run_status", "set_branch_setting", "shallow_commits",
    "signatures", "staged_changes", "start", "status_paths", "status_records", "subjects", "symlinks", "toplevel",
    "tracked_files", "tree_changes", "tree_entries", "tree_patch_chunks", "tree_without", "tree_without_paths",
    "unmerged_paths", "unstorable", "untracked_files", "verify_index", "worktree_tree",
]  # fmt: skip
