"""Source loaders, one format per module, chosen by file suffix.

Every loader is a function ``load(path, root, tag) -> list[SourceArticle]`` that raises
``MalformedSourceError`` naming the file when it cannot parse it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from skillrag.corpus.loaders import html, json_file, jsonl, markdown
from skillrag.corpus.model import SourceArticle
from skillrag.errors import UserError

__all__ = ["LOADERS", "Loader", "iter_source_files", "link_outside", "loader_for"]

Loader = Callable[[Path, Path, str], list[SourceArticle]]

#: suffix → loader. The CLI lists these as the supported formats.
LOADERS: dict[str, Loader] = {
    ".json": json_file.load,
    ".jsonl": jsonl.load,
    ".md": markdown.load,
    ".markdown": markdown.load,
    ".txt": markdown.load,
    ".html": html.load,
    ".htm": html.load,
}


def loader_for(path: Path) -> Loader | None:
    """The loader for ``path``'s suffix, or None for files we do not read."""
    return LOADERS.get(path.suffix.lower())


def link_outside(file: Path, root: Path) -> str | None:
    """Why ``file``, found under the source folder ``root``, must not be read: it is a symbolic link
    (or lies below one) whose target is outside ``root`` (a link to ``/etc/passwd`` would make the
    system's password file an article); None for an ordinary file or a link to a file inside ``root``
    (read as that file's text under the link's own name)."""
    target, base = file.resolve(), root.resolve()
    if target.is_relative_to(base):
        return None
    return (f"a symbolic link to {target}, outside the source folder {base}: not read (copy the file into "
            "the folder, or ingest its own folder)")


def iter_source_files(path: Path, skip: Sequence[Path] = ()) -> Iterator[tuple[Path, Path]]:
    """``(file, root)`` for every readable file under ``path`` (or ``path`` itself), sorted,
    skipping hidden files and folders, and the folders in ``skip`` that lie strictly inside ``path``
    (a workspace's own folders when it sits in the documents' folder; ``path`` itself inside one of
    them is still read). Symbolic links to folders are not followed; a symbolic link to a file is
    yielded, and ``ingest`` reads it only when ``link_outside`` finds its target inside ``path``. Raises
    ``UserError`` if ``path`` does not exist or is a file of a type no loader reads."""
    if not path.exists():
        raise UserError(f"{path}: no such file or folder")
    if path.is_file():
        if loader_for(path) is None:
            raise UserError(
                f"{path}: unsupported file type {path.suffix or '(no suffix)'!r} "
                f"(readable: {' '.join(sorted(LOADERS))})"
            )
        yield path, path.parent
        return
    base = path.resolve()
    inside = [d.resolve() for d in skip]
    inside = [d for d in inside if d != base and d.is_relative_to(base)]
    for f in sorted(path.rglob("*")):
        rel = f.relative_to(path)
        if any(part.startswith(".") for part in rel.parts):
            continue
        if inside and any(f.resolve().is_relative_to(d) for d in inside):
            continue
        if f.is_file() and loader_for(f) is not None:
            yield f, path
