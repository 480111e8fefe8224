"""File types for ``Grep``'s ``type`` filter (``"py"``, ``"js"``, ``"rust"`` ...).

The names and file-name globs are ripgrep's own definitions (``rg
--type-list``) for the common languages, so a model that learnt
``type: "py"`` against ripgrep gets the same files here.  A glob matches the
file name, not the path.
"""

from __future__ import annotations

import re
from typing import Final

from ._globs import compile_glob

__all__ = ["FILE_TYPES", "UnknownFileTypeError", "type_matcher"]

FILE_TYPES: Final[dict[str, tuple[str, ...]]] = {
    "asm": ("*.S", "*.asm", "*.s"),
    "c": ("*.[chH]", "*.[chH].in", "*.cats"),
    "clojure": ("*.clj", "*.cljc", "*.cljs", "*.cljx"),
    "cmake": ("*.cmake", "CMakeLists.txt"),
    "config": ("*.cfg", "*.conf", "*.config", "*.ini"),
    "cpp": (
        "*.[ChH]", "*.[ChH].in", "*.[ch]pp", "*.[ch]pp.in", "*.[ch]xx", "*.[ch]xx.in",
        "*.cc", "*.cc.in", "*.hh", "*.hh.in", "*.inl",
    ),
    "cs": ("*.cs",),
    "css": ("*.css", "*.scss"),
    "csv": ("*.csv",),
    "cuda": ("*.cu", "*.cuh"),
    "cython": ("*.pxd", "*.pxi", "*.pyx"),
    "dart": ("*.dart",),
    "diff": ("*.diff", "*.patch"),
    "docker": ("*Dockerfile*",),
    "elixir": ("*.eex", "*.ex", "*.exs", "*.heex", "*.leex", "*.livemd"),
    "elm": ("*.elm",),
    "erlang": ("*.erl", "*.hrl"),
    "go": ("*.go",),
    "graphql": ("*.graphql", "*.graphqls"),
    "h": ("*.h", "*.hh", "*.hpp"),
    "haskell": ("*.c2hs", "*.cpphs", "*.hs", "*.hsc", "*.lhs"),
    "html": ("*.ejs", "*.htm", "*.html"),
    "java": ("*.java", "*.jsp", "*.jspx", "*.properties"),
    "jinja": ("*.j2", "*.jinja", "*.jinja2"),
    "js": ("*.cjs", "*.js", "*.jsx", "*.mjs", "*.vue"),
    "json": ("*.json", "*.sarif", "composer.lock"),
    "jsonl": ("*.jsonl",),
    "julia": ("*.jl",),
    "kotlin": ("*.kt", "*.kts"),
    "less": ("*.less",),
    "lock": ("*.lock", "package-lock.json"),
    "log": ("*.log",),
    "lua": ("*.lua",),
    "make": (
        "*.mak", "*.mk", "Makefile.*", "[Gg][Nn][Uu]makefile", "[Gg][Nn][Uu]makefile.am",
        "[Gg][Nn][Uu]makefile.in", "[Mm]akefile", "[Mm]akefile.am", "[Mm]akefile.in",
    ),
    "markdown": ("*.markdown", "*.md", "*.mdown", "*.mdwn", "*.mdx", "*.mkd", "*.mkdn"),
    "md": ("*.markdown", "*.md", "*.mdown", "*.mdwn", "*.mdx", "*.mkd", "*.mkdn"),
    "nix": ("*.nix",),
    "ocaml": ("*.ml", "*.mli", "*.mll", "*.mly"),
    "perl": ("*.PL", "*.perl", "*.pl", "*.plh", "*.plx", "*.pm", "*.t"),
    "php": ("*.php", "*.php3", "*.php4", "*.php5", "*.php7", "*.php8", "*.pht", "*.phtml"),
    "proto": ("*.proto",),
    "protobuf": ("*.proto",),
    "ps": ("*.cdxml", "*.ps1", "*.ps1xml", "*.psd1", "*.psm1"),
    "py": ("*.py", "*.pyi"),
    "python": ("*.py", "*.pyi"),
    "r": ("*.R", "*.Rmd", "*.Rnw", "*.r", "*.rmd", "*.rnw"),
    "rst": ("*.rst",),
    "ruby": (
        "*.gemspec", "*.rake", "*.rb", "*.rbw", ".irbrc", "Gemfile", "Rakefile", "config.ru",
    ),
    "rust": ("*.rs",),
    "sass": ("*.sass", "*.scss"),
    "scala": ("*.sbt", "*.scala"),
    "sh": (
        "*.bash", "*.bashrc", "*.csh", "*.cshrc", "*.env", "*.ksh", "*.kshrc", "*.sh",
        "*.tcsh", "*.zsh", ".bash_login", ".bash_logout", ".bash_profile", ".bashrc",
        ".cshrc", ".env", ".kshrc", ".login", ".logout", ".profile", ".tcshrc", ".zlogin",
        ".zlogout", ".zprofile", ".zshenv", ".zshrc",
    ),
    "sql": ("*.psql", "*.sql"),
    "svelte": ("*.svelte", "*.svelte.ts"),
    "swift": ("*.swift",),
    "tex": ("*.bib", "*.cls", "*.dtx", "*.ins", "*.ltx", "*.sty", "*.tex"),
    "tf": (
        "*.terraform.lock.hcl", "*.terraformrc", "*.tf", "*.tf.json", "*.tfrc", "*.tfvars",
        "*.tfvars.json", "terraform.rc",
    ),
    "toml": ("*.toml", "Cargo.lock"),
    "ts": ("*.cts", "*.mts", "*.ts", "*.tsx"),
    "typescript": ("*.cts", "*.mts", "*.ts", "*.tsx"),
    "txt": ("*.txt",),
    "vue": ("*.vue",),
    "xml": (
        "*.dtd", "*.rng", "*.sch", "*.xhtml", "*.xjb", "*.xml", "*.xml.dist", "*.xsd",
        "*.xsl", "*.xslt",
    ),
    "yaml": ("*.yaml", "*.yml"),
    "zig": ("*.zig",),
}  # fmt: skip


class UnknownFileTypeError(Exception):
    """``type`` names no known file type; the message lists the known ones."""

    def __init__(self, name: str) -> None:
        super().__init__(
            f"Unrecognized file type: {name}. Known types: {', '.join(sorted(FILE_TYPES))}"
        )


def type_matcher(name: str) -> re.Pattern[str]:
    """One regex that fullmatches the file names of type ``name``.

    Raises:
        UnknownFileTypeError: ``name`` is not in :data:`FILE_TYPES`.
    """
    globs = FILE_TYPES.get(name)
    if globs is None:
        raise UnknownFileTypeError(name)
    return re.compile("|".join(f"(?:{compile_glob(g).pattern})" for g in globs), re.DOTALL)
