"""The oracle lane's scripted conversations (see ``claude_code_oracle.Case``)."""

from __future__ import annotations

from claude_code_oracle import Case, Hook

NOTES = "alpha\nbeta\n"
F = "{cwd}/notes.txt"


def one(name: str, tool: str, args: object, **kw: object) -> Case:
    """A case of one turn with one call."""
    return Case(name, [[("toolu_1", tool, args)]], files={"notes.txt": NOTES}, **kw)  # type: ignore[arg-type]


def _log(event: str, matcher: str = "", **answer: object) -> Hook:
    return Hook(event, matcher, dict(answer))


CASES: list[Case] = [
    # Read
    one("read-final-newline", "Read", {"file_path": F}),
    Case("read-no-final-newline", [[("toolu_1", "Read", {"file_path": "{cwd}/a.txt"})]],
         files={"a.txt": "one\ntwo"}),
    Case("read-offset-limit", [[("toolu_1", "Read",
                                 {"file_path": "{cwd}/a.txt", "offset": 2, "limit": 2})]],
         files={"a.txt": "l1\nl2\nl3\nl4\nl5\n"}),
    one("read-missing-file", "Read", {"file_path": "{cwd}/nope.txt"}),
    Case("read-directory", [[("toolu_1", "Read", {"file_path": "{cwd}/sub"})]],
         files={"sub/x.txt": "x\n"}),
    one("read-offset-past-end", "Read", {"file_path": F, "offset": 10}),
    Case("read-empty-file", [[("toolu_1", "Read", {"file_path": "{cwd}/e.txt"})]],
         files={"e.txt": ""}),
    one("read-relative-path", "Read", {"file_path": "notes.txt"}),
    # Write
    one("write-new-file", "Write", {"file_path": "{cwd}/new.txt", "content": "fresh\n"}),
    one("write-unread-file", "Write", {"file_path": F, "content": "over\n"},
        differs="read_before_write"),
    Case("write-after-read", [[("toolu_1", "Read", {"file_path": F})],
                              [("toolu_2", "Write", {"file_path": F, "content": "over\n"})]],
         files={"notes.txt": NOTES}),
    # Edit
    one("edit-unread-file", "Edit", {"file_path": F, "old_string": "beta", "new_string": "gamma"},
        differs="read_before_write"),
    Case("edit-after-read", [[("toolu_1", "Read", {"file_path": F})],
                             [("toolu_2", "Edit", {"file_path": F, "old_string": "beta",
                                                   "new_string": "gamma"})]],
         files={"notes.txt": NOTES}),
    Case("edit-replace-all", [[("toolu_1", "Read", {"file_path": "{cwd}/r.txt"})],
                              [("toolu_2", "Edit", {"file_path": "{cwd}/r.txt", "old_string": "a",
                                                    "new_string": "b", "replace_all": True})]],
         files={"r.txt": "a a\na\n"}),
    Case("edit-not-found", [[("toolu_1", "Read", {"file_path": F})],
                            [("toolu_2", "Edit", {"file_path": F, "old_string": "zeta",
                                                  "new_string": "eta"})]],
         files={"notes.txt": NOTES}),
    Case("edit-several-matches", [[("toolu_1", "Read", {"file_path": "{cwd}/r.txt"})],
                                  [("toolu_2", "Edit", {"file_path": "{cwd}/r.txt",
                                                        "old_string": "a", "new_string": "b"})]],
         files={"r.txt": "a a\na\n"}),
    one("edit-create-with-empty-old-string", "Edit",
        {"file_path": "{cwd}/made.txt", "old_string": "", "new_string": "made\n"}),
    one("edit-same-strings", "Edit", {"file_path": F, "old_string": "beta", "new_string": "beta"}),
    one("edit-missing-file", "Edit", {"file_path": "{cwd}/nope.txt", "old_string": "a",
                                      "new_string": "b"}),
    # Glob
    Case("glob-oldest-first", [[("toolu_1", "Glob", {"pattern": "*.txt"})]],
         files={"b.txt": "", "a.txt": "", "c.txt": ""},
         mtimes={"b.txt": 30, "a.txt": 20, "c.txt": 10}),
    one("glob-no-match", "Glob", {"pattern": "*.rs"}),
    Case("glob-with-path", [[("toolu_1", "Glob", {"pattern": "**/*.py", "path": "{cwd}/src"})]],
         files={"src/a.py": "", "src/k/b.py": "", "top.py": ""}, mtimes={"src/a.py": 5}),
    # Grep
    Case("grep-files-with-matches", [[("toolu_1", "Grep", {"pattern": "beta"})]],
         files={"notes.txt": NOTES, "other.txt": "beta\n", "none.txt": "x\n"},
         mtimes={"other.txt": 10}),
    Case("grep-content-numbered", [[("toolu_1", "Grep", {"pattern": "b", "output_mode": "content",
                                                          "-n": True})]],
         files={"notes.txt": NOTES}),
    Case("grep-count", [[("toolu_1", "Grep", {"pattern": "a", "output_mode": "count"})]],
         files={"notes.txt": NOTES, "z.txt": "aaa\na\n"}),
    one("grep-no-match", "Grep", {"pattern": "zzz"}),
    # Bash
    one("bash-echo", "Bash", {"command": "echo hello"}),
    one("bash-stderr-merged-in-write-order", "Bash",
        {"command": "echo out; echo oops >&2; exit 3"}),
    one("bash-no-output", "Bash", {"command": "true"}),
    one("bash-exit-code-only", "Bash", {"command": "exit 4"}),
    Case("bash-error-cancels-sibling",
         [[("toolu_1", "Bash", {"command": "sleep 0.3; exit 1"}),
           ("toolu_2", "Bash", {"command": "sleep 5; echo late"})]],
         files={"notes.txt": NOTES}, differs="synthetic_texts"),
    Case("unsafe-bash-holds-back-later-calls",
         [[("toolu_1", "Read", {"file_path": F}),
           ("toolu_2", "Bash", {"command": "touch made && echo x"}),
           ("toolu_3", "Read", {"file_path": "{cwd}/other.txt"})]],
         files={"notes.txt": NOTES, "other.txt": "other\n"}),
    Case("read-twice-unchanged",
         [[("toolu_1", "Read", {"file_path": F})], [("toolu_2", "Read", {"file_path": F})]],
         files={"notes.txt": NOTES},
         known="a second Read of an unchanged file reads in full; Claude Code sends a stub"),
    # Validation
    one("validation-missing-required", "Read", {}),
    one("validation-wrong-type", "Read", {"file_path": F, "offset": "two"}),
    one("validation-broken-json", "Bash", '{"command": "echo hi"',
        known="unparsable input is refused naming the JSON problem; Claude Code reads it as {}"),
    one("validation-unknown-tool", "Teleport", {"where": "moon"}),
    one("validation-extra-key", "Bash", {"command": "echo hi", "colour": "blue"}),
    # Permissions
    one("mode-default-bash-asks", "Bash", {"command": "echo hi"}, mode="default"),
    one("mode-default-write-asks", "Write", {"file_path": "{cwd}/n.txt", "content": "x"},
        mode="default"),
    one("mode-default-read-allowed", "Read", {"file_path": F}, mode="default"),
    one("mode-accept-edits-write", "Write", {"file_path": "{cwd}/n.txt", "content": "x\n"},
        mode="acceptEdits"),
    one("mode-accept-edits-bash-touch", "Bash", {"command": "touch made"}, mode="acceptEdits",
        known="acceptEdits does not allow Bash file commands (mkdir, touch, rm, ...)"),
    one("mode-plan-write", "Write", {"file_path": "{cwd}/n.txt", "content": "x"}, mode="plan",
        known="plan mode denies a call that changes anything; Claude Code asks"),
    one("mode-dont-ask-bash", "Bash", {"command": "echo hi"}, mode="dontAsk"),
    one("rule-deny-bash-prefix", "Bash", {"command": "rm -f notes.txt"},
        permissions={"deny": ["Bash(rm:*)"]}),
    one("rule-allow-bash-prefix", "Bash", {"command": "echo ok"}, mode="default",
        permissions={"allow": ["Bash(echo:*)"]}),
    one("rule-deny-read-path", "Read", {"file_path": F},
        permissions={"deny": ["Read(./notes.txt)"]},
        known="a path deny rule reads 'Permission to read {path} has been denied.'"),
    one("rule-ask-in-bypass", "Bash", {"command": "echo hi"},
        permissions={"ask": ["Bash(echo:*)"]}),
    # Hooks
    one("hook-pre-and-post-read-stdin", "Read", {"file_path": F},
        hooks=[_log("PreToolUse"), _log("PostToolUse")]),
    one("hook-post-bash-stdin", "Bash", {"command": "echo out; echo err >&2"},
        hooks=[_log("PostToolUse", "Bash")]),
    one("hook-post-failure-stdin", "Bash", {"command": "echo bad; exit 1"},
        hooks=[_log("PostToolUseFailure")]),
    one("hook-edit-stdin", "Edit", {"file_path": "{cwd}/made.txt", "old_string": "",
                                    "new_string": "m\n"},
        hooks=[_log("PreToolUse", "Edit")]),
    one("hook-pre-exit-2-blocks", "Bash", {"command": "echo hi"},
        hooks=[_log("PreToolUse", "Bash", exit=2, stderr="no shell today")]),
    one("hook-pre-json-deny", "Bash", {"command": "echo hi"},
        hooks=[_log("PreToolUse", "Bash", stdout={"hookSpecificOutput": {
            "hookEventName": "PreToolUse", "permissionDecision": "deny",
            "permissionDecisionReason": "not this one"}})]),
    one("hook-pre-json-allow-in-default-mode", "Bash", {"command": "echo hi"}, mode="default",
        hooks=[_log("PreToolUse", "Bash", stdout={"hookSpecificOutput": {
            "hookEventName": "PreToolUse", "permissionDecision": "allow"}})]),
    one("hook-pre-json-ask-in-bypass", "Bash", {"command": "echo hi"},
        hooks=[_log("PreToolUse", "Bash", stdout={"hookSpecificOutput": {
            "hookEventName": "PreToolUse", "permissionDecision": "ask",
            "permissionDecisionReason": "check with me"}})]),
    one("hook-pre-updated-input", "Bash", {"command": "echo one"},
        hooks=[_log("PreToolUse", "Bash", stdout={"hookSpecificOutput": {
            "hookEventName": "PreToolUse", "permissionDecision": "allow",
            "updatedInput": {"command": "echo two"}}})]),
    one("hook-post-exit-2-feedback", "Bash", {"command": "echo hi"},
        hooks=[_log("PostToolUse", "Bash", exit=2, stderr="look again")]),
    one("hook-pre-exit-1-non-blocking", "Bash", {"command": "echo hi"},
        hooks=[_log("PreToolUse", "Bash", exit=1, stderr="meh")]),
    one("hook-post-additional-context", "Read", {"file_path": F},
        hooks=[_log("PostToolUse", "Read", stdout={"hookSpecificOutput": {
            "hookEventName": "PostToolUse", "additionalContext": "remember this"}})]),
    one("hook-pre-continue-false", "Bash", {"command": "echo hi"},
        hooks=[_log("PreToolUse", "Bash", stdout={"continue": False,
                                                  "stopReason": "halt here"})]),
]
