"""``Bash(content)`` rules: prefix, wildcard and exact patterns over one shell analysis.

The command line is read once (:func:`~trioexec._shell._syntax.analyse`).  A
deny or ask rule is matched against every command the line may run
(:func:`~trioexec._shell._views.command_views`: nested ones, wrapped ones,
scripts handed to a shell, with git's global options removed), and also
against each one's flags as a set, so ``rm -rf:*`` catches ``rm -fr``,
``rm -r -f`` and ``rm --recursive --force``.  A word the shell computes stands
for anything, so a rule that could match once it is known does match.

An allow rule must cover every simple command of a line made only of simple
commands, lists and pipelines, and none may hand its words to another program
(a wrapper, a shell, ``find -exec``, ``xargs``) or write outside the working
directory (``>``, ``tee``, ``sort -o``, ``sed -i``...).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, NamedTuple

import attrs

from .._shell._syntax import Redirect, SimpleCommand, Word, analyse
from .._shell._views import (
    UNSURE,
    View,
    command_views,
    line_views,
    runs_other_commands,
    write_targets,
)

if TYPE_CHECKING:
    from .._contract._rules import RuleBehavior

__all__ = [
    "allow_parts",
    "covered_parts",
    "match_bash_rule",
    "match_bash_rules",
    "writes_outside_working_directory",
]


def match_bash_rule(content: str, command: str, *, behavior: RuleBehavior = "allow") -> bool:
    """Whether the ``Bash(content)`` rule of ``behavior`` applies to ``command``.

    ``content`` ending in ``:*`` is a prefix (``npm run test:*`` covers
    ``npm run test`` and ``npm run test -- x`` but not ``npm run testing``);
    content with an unescaped ``*`` is a wildcard pattern (``\\*`` is a literal
    star; a trailing `` *`` also covers the bare command, so ``git *`` covers
    ``git``); anything else is exact.  An exact rule covers the identical full
    command line.

    An allow rule (the default) must cover every simple command on its own,
    so ``npm run test && rm -rf /`` is not covered by ``npm run test:*``.  It
    never covers a line with a construct beyond lists and pipelines (a
    substitution, a here-doc, a function, ``case``, a loop, a subshell, a
    background ``&``, an assignment, an ANSI-C quote), a command that runs
    other commands (``sudo``, ``env``, ``timeout``, ``xargs``, ``find -exec``,
    a shell, ``eval``...), or one that writes a file outside the working
    directory (``> ~/.bashrc``, ``tee /tmp/x``, ``sort -o ../x``).

    A deny or ask rule applies when any command the line may run matches: any
    part of a list or pipeline, commands inside substitutions, function
    bodies, ``case`` arms, here-strings given to a shell, ``-c`` scripts and
    wrapped commands, with quotes removed and git's global options dropped;
    short flags match in any order and grouping and as their documented long
    forms.  It fails closed: a command name the shell computes, a script the
    line does not show (``source f``, ``curl x | sh``) or a line that does
    not parse matches every deny and ask rule.

    Never raises; answers are cached (a rule is matched against the same line
    by the read-only check, the chain and the speculative check).
    """
    return _match(content.strip(), command, behavior)


@functools.lru_cache(maxsize=4096)
def _match(content: str, command: str, behavior: RuleBehavior) -> bool:
    if command.strip() == content:
        return True
    rule = _rule(content)
    if behavior != "allow":
        return any(_may_match(rule, view) for view in _views_of(command))
    texts = _allow_texts(command)
    return texts is not None and all(rule.test(text) for text in texts)


def match_bash_rules(
    contents: tuple[str, ...], command: str, *, behavior: RuleBehavior = "allow"
) -> bool:
    """Whether one of the ``Bash(content)`` rules of ``behavior`` applies to ``command``.

    The same answer as ``any(match_bash_rule(c, command, behavior=behavior) for c in
    contents)``, worked out in one pass over the line's views: the rules are compiled
    once per set of contents (a settings file's), the answer kept per line.

    Never raises.
    """
    if not contents:
        return False
    return _match_all(contents, command, behavior)


@functools.lru_cache(maxsize=4096)
def _match_all(contents: tuple[str, ...], command: str, behavior: RuleBehavior) -> bool:
    rules, starts, first_words = _rules_of(contents)
    line = command.strip()
    for content, _ in rules:
        if line == content:
            return True
    if behavior != "allow":
        for view in line_views(command):
            first = view[0]
            if view is UNSURE or not first.static or first.expands:
                return True  # any command at all: every rule may match it
            if starts:
                text = first.text
                raw = first.raw or text
                name = text.rpartition("/")[2] or text
                if (
                    first_words is not None
                    and text
                    and raw
                    and text[0] not in first_words[0]
                    and raw[0] not in first_words[0]
                    and name not in first_words[1]
                ):
                    continue  # no literal starts as this word does, no form has its name
                candidates = []
                for _, rule in rules:
                    # _may_match (a prefix or exact rule, a known command name) holds only
                    # when the view's text, or its text as written, starts with the rule's
                    # literal, when the literal starts with the view's known words, or when
                    # the view's name is the rule's form's: each needs the first word and
                    # the literal to agree as far as both go, or the names to be equal.
                    literal = rule.literal
                    size = len(literal)
                    if (
                        text[:size] == literal[: len(text)]
                        or raw[:size] == literal[: len(raw)]
                        or (rule.form is not None and rule.form.name == name)
                    ):
                        candidates.append(rule)
                if not candidates:
                    continue  # no rule can match this view: its facts are not needed
            else:
                candidates = [rule for _, rule in rules]
            facts = _ViewFacts(view)
            for rule in candidates:
                if _may_match(rule, facts):
                    return True
        return False
    covered = _covered(rules, command)
    return covered is not None and all(covered)


def covered_parts(contents: tuple[str, ...], command: str) -> tuple[bool, ...] | None:
    """For each part of ``command`` an allow rule must cover, whether one of ``contents``
    (allow rules) covers it on its own; None when no allow rule can cover the line.

    As in Claude Code, each part of a list or pipeline is checked on its own:
    ``git add x && git commit -m x`` is covered by ``git add:*`` and
    ``git commit:*`` together.  A line that changes directory and runs git
    (``cd sub && git status``: git runs what the configuration of the repository
    it lands in names) needs one rule covering every part.
    """
    return _covered(_rules_of(tuple(contents)).rules, command)


def _covered(rules: tuple[tuple[str, _Rule], ...], command: str) -> tuple[bool, ...] | None:
    parts = allow_parts(command)
    if parts is None:
        return None
    texts = [part.text for part in parts]
    if _cd_and_git(parts):
        whole = any(all(rule.test(text) for text in texts) for _, rule in rules)
        return (True,) * len(texts) if whole else None
    return tuple(any(rule.test(text) for _, rule in rules) for text in texts)


def _cd_and_git(parts: tuple[SimpleCommand, ...]) -> bool:
    if len(parts) < 2:
        return False
    names = {(part.words[0].text.rpartition("/")[2]) for part in parts}
    return bool(names & {"cd", "pushd", "popd"}) and "git" in names


@functools.lru_cache(maxsize=256)
def _rules_of(contents: tuple[str, ...]) -> _RuleSet:
    """The rules of ``contents`` compiled once per set (per settings, not per command)."""
    rules = tuple((c.strip(), _rule(c.strip())) for c in contents)
    heads = frozenset(rule.literal[:1] for _, rule in rules)
    names = frozenset(rule.form.name for _, rule in rules if rule.form is not None)
    return _RuleSet(
        rules,
        all(rule.kind != "wildcard" for _, rule in rules),
        None if "" in heads else (heads, names),
    )


class _RuleSet(NamedTuple):
    rules: tuple[tuple[str, _Rule], ...]
    """Each content stripped, with its compiled rule."""
    starts: bool
    """Views may be sorted out by their first word (no wildcard rule among them)."""
    first_words: tuple[frozenset[str], frozenset[str]] | None
    """What a view's first word must share with one of the rules to be a candidate: the
    first letter of a rule's literal, or a rule's form's name (None: a rule with an empty
    literal, which every first word shares)."""


class _ViewFacts:
    """One view of a command line, with what every rule compares read once."""

    __slots__ = ("_form", "any_command", "dynamic", "name", "raw", "text", "view")

    def __init__(self, view: View) -> None:
        self.view = view
        self.any_command = view is UNSURE or not view[0].static or view[0].expands
        texts: list[str] = []
        raws: list[str] = []
        self.dynamic: int | None = None
        """The index of the first word the shell computes (or that expands), if any."""
        for index, word in enumerate(view):
            if not word.static or word.expands:
                self.dynamic = index
                break
            texts.append(word.text)
            raws.append(word.raw or word.text)
        self.text = " ".join(texts)
        raw = " ".join(raws)
        self.raw = None if raw == self.text else raw
        """The words as written, when that differs from ``text`` (quotes, escapes)."""
        first = view[0].text
        self.name = first.rpartition("/")[2] or first  # os.path.basename, without its calls
        self._form: _Form | None = None

    def form(self) -> _Form:
        """The view (its words before the first computed one) as a name, flags and operands."""
        if self._form is None:
            self._form = _form(self.view if self.dynamic is None else self.view[: self.dynamic])
        return self._form


@functools.lru_cache(maxsize=2048)
def _views_of(command: str) -> tuple[_ViewFacts, ...]:
    return tuple(_ViewFacts(view) for view in command_views(analyse(command)))


@functools.lru_cache(maxsize=2048)
def _allow_texts(command: str) -> tuple[str, ...] | None:
    """The simple commands an allow rule must each cover, as written (None: it covers none)."""
    parts = allow_parts(command)
    return None if parts is None else tuple(part.text for part in parts)


@functools.lru_cache(maxsize=2048)
def allow_parts(command: str) -> tuple[SimpleCommand, ...] | None:
    """The simple commands an allow rule must each cover (None: it covers none).

    None when the line has a construct beyond simple commands in lists and
    pipelines, or a command with assignments, a computed name, one that runs
    other commands, or one that writes outside the working directory.  Each
    part's ``text`` is as written: ``'rm' x`` is not ``rm x`` to an allow rule.
    """
    analysis = analyse(command)
    if not analysis.plain or not analysis.commands:
        return None
    for simple in analysis.commands:
        name = simple.name
        if simple.assignments or name is None or not name.static or name.expands:
            return None
        if runs_other_commands(simple) or _writes_outside(simple.redirects, simple.words):
            return None
    return analysis.commands


class _Form:
    """A command line read as a name, a set of flags and its operands in order."""

    __slots__ = ("flags", "name", "operands")

    def __init__(self, name: str, flags: frozenset[str], operands: tuple[str, ...]) -> None:
        self.name = name
        self.flags = flags
        self.operands = operands


@attrs.frozen
class _Rule:
    kind: str  # "prefix", "wildcard", "exact"
    text: str
    test: Callable[[str], bool]
    literal: str
    """The rule's text before its first wildcard: what a computed word could still complete."""
    form: _Form | None


@functools.lru_cache(maxsize=512)
def _rule(content: str) -> _Rule:
    if content.endswith(":*"):
        prefix = content[:-2].rstrip()

        def covers_prefix(text: str) -> bool:
            return text == prefix or (text.startswith(prefix) and text[len(prefix)].isspace())

        return _Rule("prefix", prefix, covers_prefix, prefix, _rule_form(prefix))
    if "*" in content:  # a wildcard, or a literal `\*`
        regex = _compile_wildcard(content)
        star = re.search(r"(?<!\\)\*", content)
        literal = content[: star.start()] if star else content
        return _Rule("wildcard", content, lambda t: regex.fullmatch(t) is not None, literal, None)
    return _Rule("exact", content, lambda t: t == content, content, _rule_form(content))


def _rule_form(text: str) -> _Form | None:
    analysis = analyse(text)
    if not analysis.plain or len(analysis.commands) != 1:
        return None
    words = analysis.commands[0].words
    if not words or not all(w.static and not w.expands for w in words):
        return None
    return _form(words)


_LONG_FORMS: dict[str, dict[str, str]] = {
    "rm": {"--recursive": "-r", "-R": "-r", "--force": "-f", "--dir": "-d",
           "--interactive": "-i", "--verbose": "-v"},
    "cp": {"--recursive": "-r", "-R": "-r", "--force": "-f", "--archive": "-a"},
    "mv": {"--force": "-f", "--no-clobber": "-n"},
    "chmod": {"--recursive": "-R", "-r": "-R"},
    "chown": {"--recursive": "-R"},
    "chgrp": {"--recursive": "-R"},
    "git push": {"--force": "-f", "--delete": "-d", "--all": "--all", "--mirror": "--mirror"},
    "git clean": {"--force": "-f", "--dry-run": "-n"},
    "git checkout": {"--force": "-f"},
    "git branch": {"--delete": "-d", "--force": "-f", "--move": "-m"},
    "git reset": {"--hard": "--hard"},
    "git commit": {"--all": "-a", "--amend": "--amend", "--message": "-m"},
    "sed": {"--in-place": "-i"},
    "kill": {"--signal": "-s"},
    "curl": {"--output": "-o", "--request": "-X", "--data": "-d"},
}  # fmt: skip
"""Documented long forms and aliases of short flags, by command (or ``git`` subcommand)."""


_NO_LONG_FORMS: dict[str, str] = {}


def _form(words: tuple[Word, ...] | View) -> _Form:
    name = words[0].text.rpartition("/")[2] or words[0].text
    flags: set[str] = set()
    operands: list[str] = []
    options = True
    table = _LONG_FORMS.get(name, _NO_LONG_FORMS)
    for word in words[1:]:
        text = word.text
        if options and text == "--":
            options = False
        elif options and text.startswith("--") and len(text) > 2:
            flag = text.partition("=")[0]
            flags.add(table.get(flag, flag))
            # `--forc` is `--force` to getopt_long and git: a unique prefix names the option.
            flags.update(table[k] for k in table if k.startswith(flag) and len(flag) > 3)
        elif options and text.startswith("-") and len(text) > 1 and not text[1:].isdigit():
            for letter in text[1:]:
                flag = "-" + letter
                flags.add(table.get(flag, flag))
        else:
            operands.append(text)
            if name == "git" and len(operands) == 1:
                table = _LONG_FORMS.get("git " + text, _NO_LONG_FORMS)
    return _Form(name, frozenset(flags), tuple(operands))


def _has_flag(flags: frozenset[str], wanted: str) -> bool:
    """``--forc`` names ``--force``: getopt_long and git take a unique prefix."""
    if wanted in flags:
        return True
    return wanted.startswith("--") and any(
        f.startswith("--") and len(f) > 3 and wanted.startswith(f) for f in flags
    )


def _form_matches(rule: _Form, view: _ViewFacts, *, prefix: bool) -> bool:
    if view.name != rule.name:  # the form's name, read without building the form
        return False
    if view.dynamic is None and rule.operands and rule.operands[0] not in view.text:
        return False  # every operand is one of the view's words: `push` is not in `git status`
    form = view.form()
    if view.dynamic is not None:
        # A computed word may be any flags and operands: the known ones must fit.
        return all(a == b for a, b in zip(form.operands, rule.operands, strict=False))
    if not all(_has_flag(form.flags, f) for f in rule.flags):
        return False
    if prefix:
        return form.operands[: len(rule.operands)] == rule.operands
    return form.operands == rule.operands and len(form.flags) == len(rule.flags)


def _may_match(rule: _Rule, view: _ViewFacts) -> bool:
    """Whether ``rule`` matches ``view``, or could once its computed words are known."""
    if view.any_command:
        return True
    if view.dynamic is None:
        if rule.kind == "prefix":  # covers_prefix, inline: the common rule, tested per view
            prefix = rule.text
            for text in (view.text, view.raw):
                if (
                    text is not None
                    and text.startswith(prefix)
                    and (len(text) == len(prefix) or text[len(prefix)].isspace())
                ):
                    return True
        elif rule.test(view.text) or (view.raw is not None and rule.test(view.raw)):
            return True
    else:
        known = view.text
        if (rule.literal + " ").startswith(known + " "):
            return True  # the computed words may complete the rule
        if rule.kind != "exact" and (known + " ").startswith(
            rule.literal if rule.kind == "wildcard" else rule.literal + " "
        ):
            return True
    form = rule.form
    return (
        form is not None
        and view.name == form.name  # the form's name, read without building the form
        and _form_matches(form, view, prefix=rule.kind != "exact")
    )


def _writes_outside(redirects: tuple[Redirect, ...], words: tuple[Word, ...]) -> bool:
    targets = [r.target for r in redirects if r.writes]
    targets.extend(write_targets(words))
    return any(t is None or not _inside_lexically(t) for t in targets)


def _inside_lexically(word: Word) -> bool:
    """A write target named relative to the working directory, never leaving it."""
    if not word.static or word.expands:
        return False
    text = word.text
    if text == "/dev/null":
        return True
    if not text or text.startswith(("/", "~", "-")) or "=" in text.split("/", 1)[0][:1]:
        return False
    return ".." not in text.split("/")


def writes_outside_working_directory(command: str) -> bool:
    """Whether a write target of ``command`` (a redirection, ``tee F``...) may leave the working
    directory: absolute, under ``~``, with a ``..`` component, or computed."""
    analysis = analyse(command)
    return analysis.unparsed or any(
        _writes_outside(c.redirects, c.words) for c in analysis.commands
    )


def _compile_wildcard(content: str) -> re.Pattern[str]:
    parts: list[str] = []
    stars = 0
    i = 0
    while i < len(content):
        c = content[i]
        if c == "\\" and i + 1 < len(content) and content[i + 1] in "*\\":
            parts.append(re.escape(content[i + 1]))
            i += 2
            continue
        if c == "*":
            parts.append(".*")
            stars += 1
        else:
            parts.append(re.escape(c))
        i += 1
    # `git *` also covers a bare `git` when that star is the only wildcard.
    if stars == 1 and content.endswith(" *"):
        parts[-2:] = ["(?: .*)?"]
    return re.compile("".join(parts), re.DOTALL)
