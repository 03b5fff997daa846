"""The evidence contract: the output schema and the verbatim-evidence rule, enforced in code.

Every snippet an output emits must be a substring of the body of the article it cites, after a
*normalisation that touches only punctuation look-alikes and whitespace* (see ``normalize``).
Nothing else is forgiven: no case folding, no Unicode letter normalisation (NFC/NFKC), no
ellipsis stitching of separate passages, no paraphrase. ``validate_output`` lists every
violation; any violation rejects the whole output (``SkillTools.save_output`` then raises
``ContractViolation`` with all reasons).

Normalisation (applied identically to the snippet and to the article body):

* single quotes and apostrophe look-alikes (U+2018, U+2019, U+201A, U+201B, U+2032, U+02BC) → ``'``
* double-quote look-alikes (U+201C, U+201D, U+201E, U+201F, U+2033) → ``"``
* hyphen and dash look-alikes (U+2010–U+2015, U+2212, U+FE58, U+FE63, U+FF0D) → ``-``
* the ellipsis character U+2026 → ``...`` (a match may not start or end inside it)
* every whitespace character (``str.isspace``: space, tab, CR/LF, NBSP U+00A0, U+2000–U+200A,
  U+202F, U+205F, U+3000, line/paragraph separators …) → one space; runs collapse to one
  space; leading and trailing whitespace is dropped.

``locate`` maps a match in normalised text back to character offsets in the *raw* body, so an
accepted snippet can be stored as ``body[start:end]`` plus the article's content hash: the audit
still holds after the corpus changes.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, TypeGuard

from pydantic import BaseModel, ConfigDict, Field

from skillrag.workspace.ids import is_id

__all__ = [
    "ALLOWED_TOP_FIELDS",
    "DERIVED_FIELDS",
    "OPTIONAL_TOP_FIELDS",
    "REQUIRED_TOP_FIELDS",
    "SNIPPET_FIELDS",
    "ContractLimits",
    "locate",
    "locate_all",
    "normalize",
    "normalize_with_map",
    "validate_output",
    "verify_audit",
]

#: Fields every output must have.
REQUIRED_TOP_FIELDS = ("case_id", "guidance", "snippets", "n_snippets", "articles_consulted")
#: Fields an output may also carry: ``audit`` (written by ``save_output``), ``meta`` (free-form object),
#: ``derived`` (the figures the guidance computed, each with the quoted figures it comes from).
OPTIONAL_TOP_FIELDS = ("audit", "meta", "derived")
ALLOWED_TOP_FIELDS = REQUIRED_TOP_FIELDS + OPTIONAL_TOP_FIELDS
#: Fields of each snippet (all required, all non-empty strings; no others allowed).
SNIPPET_FIELDS = ("source_article", "source_title", "text", "why")
#: Fields of each ``derived`` entry (all required; no others allowed): ``value`` (the figure as the
#: guidance states it), ``from`` (the quoted figures or phrases it is computed from), ``how`` (the
#: computation in words).
DERIVED_FIELDS = ("value", "from", "how")


_CHAR_MAP: dict[str, str] = {}
for _c in "\u2018\u2019\u201a\u201b\u2032\u02bc":
    _CHAR_MAP[_c] = "'"
for _c in "\u201c\u201d\u201e\u201f\u2033":
    _CHAR_MAP[_c] = '"'
for _c in "\u2010\u2011\u2012\u2013\u2014\u2015\u2212\ufe58\ufe63\uff0d":
    _CHAR_MAP[_c] = "-"
_CHAR_MAP["\u2026"] = "..."


class ContractLimits(BaseModel):
    """Limits of the evidence contract. Lengths are in characters of the *normalised* snippet."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    max_snippets: int = Field(15, ge=1, le=200, description="Most snippets one output may carry.")
    min_snippets: int = Field(1, ge=0, description="Fewest snippets one output must carry.")
    min_snippet_chars: int = Field(15, ge=1, description="Shortest snippet text, in characters.")
    max_snippet_chars: int = Field(2000, ge=1, description="Longest snippet text, in characters.")
    require_consulted: bool = Field(
        True, description="Every cited article must also be listed in `articles_consulted`."
    )
    max_derived: int = Field(30, ge=0, description="Most `derived` entries one output may carry.")
    max_derived_from: int = Field(10, ge=1, description="Most `from` items one `derived` entry may list.")


def normalize_with_map(text: str) -> tuple[str, list[int], list[int]]:
    """Normalise ``text`` (see module doc) and keep, for each output character ``j``, the raw
    span ``text[starts[j]:ends[j]]`` it came from. Returns ``(normalised, starts, ends)``;
    leading/trailing whitespace is dropped."""
    out: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch.isspace():
            j = i
            while j < n and text[j].isspace():
                j += 1
            if out:  # no leading space
                out.append(" ")
                starts.append(i)
                ends.append(j)
            i = j
            continue
        rep = _CHAR_MAP.get(ch, ch)
        for r in rep:
            out.append(r)
            starts.append(i)
            ends.append(i + 1)
        i += 1
    if out and out[-1] == " ":
        out.pop()
        starts.pop()
        ends.pop()
    return "".join(out), starts, ends


_TRANSLATE = str.maketrans(_CHAR_MAP)
_SPACE_RUN = re.compile(r"\s+")  # ``\s`` on str patterns is exactly ``str.isspace``


def normalize(text: str) -> str:
    """``text`` with punctuation look-alikes mapped to ASCII and whitespace collapsed (module doc).

    Pure and idempotent: ``normalize(normalize(s)) == normalize(s)``; always
    ``normalize_with_map(s)[0]``, computed without the offset maps (the review pages normalise whole
    articles and guidance many times per page).
    """
    return _SPACE_RUN.sub(" ", text.translate(_TRANSLATE)).strip()


def locate(snippet: str, body: str) -> tuple[int, int] | None:
    """Where ``snippet`` occurs in ``body`` under the contract's normalisation.

    Returns ``(start, end)`` character offsets into the **raw** ``body`` (so ``body[start:end]``
    normalises to ``normalize(snippet)``) for the first occurrence, or ``None`` when the snippet
    is empty after normalisation or does not occur. A match may not begin or end in the middle
    of a character that normalises to several (the ellipsis), so ``"wait."`` is not found in
    ``"wait…"``. ``locate_all`` gives every occurrence.
    """
    spans = locate_all(snippet, body, limit=1)
    return spans[0] if spans else None


def locate_all(snippet: str, body: str, *, limit: int | None = None) -> list[tuple[int, int]]:
    """Every occurrence of ``snippet`` in ``body`` (as ``locate``: raw ``(start, end)`` offsets), in
    body order, overlapping ones included; at most ``limit`` when given. ``[]`` when none."""
    needle = normalize(snippet)
    if not needle:
        return []
    hay, starts, ends = normalize_with_map(body)
    out: list[tuple[int, int]] = []
    pos = hay.find(needle)
    while pos != -1 and (limit is None or len(out) < limit):
        last = pos + len(needle) - 1
        first_ok = pos == 0 or starts[pos - 1] != starts[pos]
        last_ok = last == len(hay) - 1 or starts[last + 1] != starts[last]
        if first_ok and last_ok:
            out.append((starts[pos], ends[last]))
        pos = hay.find(needle, pos + 1)
    return out


def _is_text(value: object) -> TypeGuard[str]:
    return isinstance(value, str) and bool(value.strip())


def validate_output(
    output: Any, articles: Mapping[str, str], limits: ContractLimits | None = None
) -> list[str]:
    """Check one output against the schema and the verbatim-evidence rule.

    ``output`` is the parsed JSON object; ``articles`` maps article id → raw body for (at
    least) every article the output cites or consults; ids missing from it are *unknown*.
    Returns every violation as a one-line reason (``"snippets[2].text: ..."``); an empty list
    means accepted. Never raises for bad output.

    Rules: an object with exactly the fields ``case_id`` (plain id), ``guidance`` (non-empty
    string), ``snippets`` (list of ``min_snippets``..``max_snippets`` objects), ``n_snippets``
    (integer equal to ``len(snippets)``), ``articles_consulted`` (list of known ids), plus the
    optional ``audit``/``meta`` objects and the optional ``derived`` list (at most ``max_derived``
    objects with exactly ``value`` and ``how``, non-empty strings, and ``from``, a list of 1 to
    ``max_derived_from`` non-empty strings); each snippet has exactly ``source_article`` (a known
    id), ``source_title``, ``text``, ``why`` (non-empty strings); each ``text`` is
    ``min_snippet_chars``..``max_snippet_chars`` long after normalisation, is not a duplicate
    of an earlier snippet of the same article, and occurs in *that* article (``locate``); with
    ``require_consulted`` every cited article is listed in ``articles_consulted``.
    """
    lim = limits or ContractLimits()
    if not isinstance(output, dict):
        return [f"output must be a JSON object, got {type(output).__name__}"]
    reasons: list[str] = []
    for f in REQUIRED_TOP_FIELDS:
        if f not in output:
            reasons.append(f"missing required field {f!r}")
    for f in output:
        if f not in ALLOWED_TOP_FIELDS:
            reasons.append(f"unknown field {f!r} (allowed: {', '.join(ALLOWED_TOP_FIELDS)})")
    for f in ("audit", "meta"):
        if f in output and not isinstance(output[f], dict):
            reasons.append(f"{f} must be an object")
    if "derived" in output:
        reasons += _derived_reasons(output["derived"], lim)

    case_id = output.get("case_id")
    if "case_id" in output and not is_id(case_id, "case"):
        reasons.append(f"case_id: {case_id!r} is not a plain id")
    if "guidance" in output and not _is_text(output["guidance"]):
        reasons.append("guidance: must be a non-empty string")

    consulted = output.get("articles_consulted")
    consulted_ids: set[str] = set()
    if "articles_consulted" in output:
        if not isinstance(consulted, list) or not all(isinstance(a, str) for a in consulted):
            reasons.append("articles_consulted: must be a list of article ids")
        else:
            consulted_ids = set(consulted)
            for a in consulted:
                if a not in articles:
                    reasons.append(f"articles_consulted: unknown article {a!r}")

    snippets = output.get("snippets")
    if "snippets" in output:
        if not isinstance(snippets, list):
            reasons.append("snippets: must be a list")
            snippets = None
        elif len(snippets) > lim.max_snippets:
            reasons.append(f"snippets: {len(snippets)} snippets, at most {lim.max_snippets} allowed")
        elif len(snippets) < lim.min_snippets:
            reasons.append(f"snippets: {len(snippets)} snippets, at least {lim.min_snippets} required")
    n = output.get("n_snippets")
    if "n_snippets" in output:
        if not isinstance(n, int) or isinstance(n, bool):
            reasons.append("n_snippets: must be an integer")
        elif isinstance(snippets, list) and n != len(snippets):
            reasons.append(f"n_snippets: {n} does not match the {len(snippets)} snippets given")

    seen: dict[tuple[str, str], int] = {}
    for i, snip in enumerate(snippets or []):
        where = f"snippets[{i}]"
        if not _object_of(snip, SNIPPET_FIELDS, where, reasons, "must be an object"):
            continue
        bad = [f for f in SNIPPET_FIELDS if not _is_text(snip.get(f))]
        for f in bad:
            reasons.append(f"{where}.{f}: must be a non-empty string")
        aid, text = snip.get("source_article"), snip.get("text")
        if not (_is_text(aid) and _is_text(text)):  # named in ``bad`` above
            continue
        if not is_id(aid, "article"):
            reasons.append(f"{where}.source_article: {aid!r} is not a plain id")
            continue
        if aid not in articles:
            reasons.append(f"{where}.source_article: unknown article {aid!r}")
            continue
        if lim.require_consulted and isinstance(consulted, list) and aid not in consulted_ids:
            reasons.append(f"{where}.source_article: {aid!r} is cited but not listed in articles_consulted")
        norm = normalize(text)
        if len(norm) < lim.min_snippet_chars:
            reasons.append(f"{where}.text: {len(norm)} characters, at least {lim.min_snippet_chars} required")
            continue
        if len(norm) > lim.max_snippet_chars:
            reasons.append(f"{where}.text: {len(norm)} characters, at most {lim.max_snippet_chars} allowed")
            continue
        key = (aid, norm)
        if key in seen:
            reasons.append(f"{where}.text: duplicates snippets[{seen[key]}]")
            continue
        seen[key] = i
        if locate(text, articles[aid]) is None:
            reasons.append(f"{where}.text: not a verbatim substring of article {aid!r}")
    return reasons


def _object_of(item: Any, fields: Sequence[str], where: str, reasons: list[str], not_object: str) -> bool:
    """True when ``item`` is a JSON object; each field it has outside ``fields`` adds a reason (and a
    non-object adds ``where: not_object``, False)."""
    if not isinstance(item, dict):
        reasons.append(f"{where}: {not_object}")
        return False
    reasons += [f"{where}: unknown field {f!r} (allowed: {', '.join(fields)})" for f in item if f not in fields]
    return True


def _derived_reasons(derived: Any, lim: ContractLimits) -> list[str]:
    """What is wrong with the shape of ``derived`` (a list of ``{value, from, how}``; see ``DERIVED_FIELDS``).
    Whether each ``from`` item is quoted is a warning (``skill.gaps``), not a rejection."""
    if not isinstance(derived, list):
        return ["derived: must be a list of {value, from, how} objects"]
    if len(derived) > lim.max_derived:
        return [f"derived: {len(derived)} entries, at most {lim.max_derived} allowed"]
    reasons: list[str] = []
    for i, d in enumerate(derived):
        where = f"derived[{i}]"
        if not _object_of(d, DERIVED_FIELDS, where, reasons, f"must be an object with {', '.join(DERIVED_FIELDS)}"):
            continue
        for f in ("value", "how"):
            if not _is_text(d.get(f)):
                reasons.append(f"{where}.{f}: must be a non-empty string")
        src = d.get("from")
        if not isinstance(src, list) or not src or not all(_is_text(x) for x in src):
            reasons.append(f"{where}.from: must be a non-empty list of the quoted figures it comes from (strings)")
        elif len(src) > lim.max_derived_from:
            reasons.append(f"{where}.from: {len(src)} items, at most {lim.max_derived_from} allowed")
    return reasons


def verify_audit(
    output: Any, bodies: Mapping[str, str], hashes: Mapping[str, str]
) -> tuple[list[str], list[str]]:
    """Re-check the ``audit.snippets`` block ``save_output`` wrote (offsets + content hashes).

    ``bodies``/``hashes`` give the *current* article bodies and content hashes. For each record
    whose article still has the recorded hash, ``body[start:end]`` must normalise to the
    snippet's text (else a *reason*). A record whose article changed or vanished since the save
    gives a *note*: the stored offsets refer to the old body. Returns ``(reasons, notes)``;
    an output without an audit block gives ``([], [])``.
    """
    if not isinstance(output, dict) or not isinstance(output.get("audit"), dict):
        return [], []
    records = output["audit"].get("snippets")
    given = output.get("snippets")
    snippets: list[Any] = given if isinstance(given, list) else []
    if not isinstance(records, list):
        return ["audit.snippets: must be a list"], []
    reasons: list[str] = []
    notes: list[str] = []
    for rec in records:
        if not isinstance(rec, dict) or not all(k in rec for k in ("index", "source_article", "start", "end",
                                                                    "content_hash")):
            reasons.append("audit.snippets: each record needs index, source_article, start, end, content_hash")
            continue
        i, aid = rec["index"], rec["source_article"]
        if not isinstance(aid, str):
            reasons.append(f"audit.snippets: source_article {aid!r} is not an article id")
            continue
        if not isinstance(i, int) or not 0 <= i < len(snippets) or not isinstance(snippets[i], dict):
            reasons.append(f"audit.snippets: index {i!r} names no snippet")
            continue
        if snippets[i].get("source_article") != aid:
            reasons.append(f"audit.snippets[{i}]: cites {aid!r} but the snippet cites "
                           f"{snippets[i].get('source_article')!r}")
            continue
        if aid not in hashes:
            notes.append(f"audit.snippets[{i}]: article {aid!r} is no longer in the corpus")
            continue
        if hashes[aid] != rec["content_hash"]:
            notes.append(f"audit.snippets[{i}]: article {aid!r} changed since the output was saved")
            continue
        start, end = rec["start"], rec["end"]
        body = bodies.get(aid, "")
        ok = isinstance(start, int) and isinstance(end, int) and 0 <= start < end <= len(body)
        if not ok or normalize(body[start:end]) != normalize(str(snippets[i].get("text", ""))):
            reasons.append(f"audit.snippets[{i}]: offsets {start}..{end} do not hold the snippet in {aid!r}")
    return reasons, notes
