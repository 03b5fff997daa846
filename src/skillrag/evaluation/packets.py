"""External judges: self-contained judge packets out, verdicts back in.

A person, or a judge running in another tool, gives the verdicts a judge model would give, on the
same rubric. ``write_packets`` writes one folder per (arm, case, judge) item::

    PACKETS/README.md            what to do, the items in (shuffled) order, the verdict format
    PACKETS/ITEM/prompt.md       the judge's prompt exactly as a judge model receives it (rubric + inputs)
    PACKETS/ITEM/case.json       the case as the agent saw it (never the ground truth)
    PACKETS/ITEM/reference.json  the reference (reference guidance, required documents, expected actions);
                                 not for the reference-free ``correctness`` judge
    PACKETS/ITEM/candidate.json  what this judge grades: the guidance, or the snippets (article id + text)
    PACKETS/ITEM/documents/      (with ``documents``) the required articles, ``ID.md``
    PACKETS/ITEM/verdict.json    the template to fill: ``{"item", "judge", "verdict": null, "reason", "voter"}``

Blind packets (the default) name items by random ids (``item-3f9a0c1b2e``, from a seeded RNG) and write
the item → (arm, case, judge) mapping to a separate file *outside* the packets folder
(``PACKETS.mapping.json`` beside it): give the judge the folder, never the mapping. Nothing in a blind
item names the arm: no audit block, no run record, no harness name.

``write_items`` is the writer under ``write_packets``, for items of any kind (``PacketItem``): the
navigation layer's link audit (``evaluation.link_packets``) writes one item per page -> article link with it.

``read_votes`` reads verdicts back from the filled packets folder (each ``ITEM/verdict.json``, one vote or
``{"votes": [...]}``), a JSONL file (one vote per line) or a JSON list. A vote names its ``item`` (resolved
through the mapping) or, unblind, its ``arm``, ``case_id`` and ``judge``; ``verdict`` is ``accept`` /
``reject`` (also ``yes``/``no``, ``true``/``false``, ``VERDICT: accept``); an empty verdict (the untouched
template) is no vote; anything else is a failed vote, recorded like an unparseable model reply. The
decision per item is ``judges.decide``: a strict majority of the votes (of ``votes_per_item`` when given,
missing votes counting as failed), exactly as for model calls. The mapping keeps each prompt's sha256, so
a verdict on a candidate that has changed since its packet was written is refused, not counted.
"""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from skillrag.errors import MalformedSourceError, UserError
from skillrag.evaluation.judges import JUDGES, JudgeVote, judge_inputs, parse_verdict
from skillrag.evaluation.metrics import Reference
from skillrag.workspace import atomic_write_text

__all__ = [
    "ItemRef",
    "PacketEntry",
    "PacketItem",
    "PacketMapping",
    "VoteSet",
    "default_mapping_path",
    "load_mapping",
    "prompt_sha256",
    "read_votes",
    "write_items",
    "write_packets",
]


@dataclass(frozen=True)
class PacketEntry:
    """One item to judge: the ``arm``, the agent-facing ``case``, its ``reference``, the accepted
    ``output`` and the ``judge`` name."""

    arm: str
    case: Any
    reference: Reference
    output: Mapping[str, Any]
    judge: str

    def prompt(self) -> str:
        """The judge prompt, the same text ``run_judge`` sends to a model."""
        return judge_inputs(self.case, self.output, self.reference).render(self.judge)


def prompt_sha256(prompt: str) -> str:
    return hashlib.sha256(prompt.encode("utf-8")).hexdigest()


class ItemRef(BaseModel):
    """What a packet item stands for."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    arm: str
    case_id: str
    judge: str
    prompt_sha256: str = Field(description="sha256 of prompt.md, to refuse verdicts on a changed candidate.")


class PacketMapping(BaseModel):
    """The item → (arm, case, judge) mapping; for blind packets keep it away from the judge."""

    model_config = ConfigDict(extra="forbid")

    version: int = 1
    created_at: str
    packets_dir: str
    blind: bool
    seed: int | None = None
    items: dict[str, ItemRef]


def default_mapping_path(packets_dir: Path) -> Path:
    """``PACKETS.mapping.json`` beside the packets folder (never inside it)."""
    p = Path(packets_dir)
    return p.parent / f"{p.name}.mapping.json"


def _inside(path: Path, folder: Path) -> bool:
    try:
        path.resolve().relative_to(folder.resolve())
    except ValueError:
        return False
    return True


def _case_dump(case: Any) -> dict[str, Any]:
    if isinstance(case, BaseModel):
        return case.model_dump(mode="json")
    return dict(case)


def _candidate(judge: str, output: Mapping[str, Any]) -> dict[str, Any]:
    if "snippets" in JUDGES[judge].placeholders:
        snips = output.get("snippets") if isinstance(output.get("snippets"), list) else []
        return {"snippets": [{"source_article": s.get("source_article"), "text": s.get("text")}
                             for s in snips if isinstance(s, Mapping)]}
    guidance = output.get("guidance")
    return {"guidance": guidance if isinstance(guidance, str) else ""}


@dataclass(frozen=True)
class PacketItem:
    """One item for an external judge, whatever is judged: it stands for ``(arm, case_id, judge)`` in the
    mapping; ``name`` is its folder when the packets are not blind; ``prompt`` goes to ``prompt.md`` and
    ``files`` (relative path -> text) beside it. ``write_packets`` makes them from ``PacketEntry``s; the
    navigation layer's link audit (``evaluation.link_packets``) makes one per page -> article link."""

    arm: str
    case_id: str
    judge: str
    name: str
    prompt: str
    files: Mapping[str, str] = field(default_factory=dict)


def write_items(
    dest: str | Path,
    items: Iterable[PacketItem],
    *,
    readme: Callable[[list[tuple[str, str]]], str],
    blind: bool = True,
    seed: int | None = None,
    mapping_path: str | Path | None = None,
) -> tuple[PacketMapping, Path]:
    """Write one folder per item under ``dest`` (``prompt.md``, the item's files, the ``verdict.json``
    template), ``README.md`` (``readme([(item id, judge), ...])``) and the mapping beside ``dest``;
    returns ``(mapping, mapping path)``. Blind: shuffled by a ``seed``ed RNG, random item ids.

    Raises ``UserError`` when ``dest`` already holds files, when the mapping would land inside
    ``dest``, when an unblind name repeats, or when there is nothing to judge."""
    dest = Path(dest)
    items = list(items)
    if not items:
        raise UserError("nothing to judge: no packet written")
    if dest.exists() and (not dest.is_dir() or any(dest.iterdir())):
        raise UserError(f"{dest}: already exists and is not an empty folder (packets go into a new folder)")
    mpath = Path(mapping_path) if mapping_path is not None else default_mapping_path(dest)
    if _inside(mpath, dest):
        raise UserError(f"{mpath}: the mapping must not be inside the packets folder the judge reads")
    rng = random.Random(seed)
    order = list(range(len(items)))
    if blind:
        rng.shuffle(order)
    refs: dict[str, ItemRef] = {}
    names: list[tuple[str, str]] = []
    for idx in order:
        it = items[idx]
        if blind:
            item = f"item-{rng.getrandbits(40):010x}"
            while item in refs:
                item = f"item-{rng.getrandbits(40):010x}"
        else:
            item = it.name
            if item in refs:
                raise UserError(f"item {item!r} given twice")
        folder = dest / item
        folder.mkdir(parents=True)
        (folder / "prompt.md").write_text(it.prompt, encoding="utf-8")
        for rel, text in it.files.items():
            (folder / rel).parent.mkdir(parents=True, exist_ok=True)
            (folder / rel).write_text(text, encoding="utf-8")
        template = {"item": item, "judge": it.judge, "verdict": None, "reason": "", "voter": ""}
        (folder / "verdict.json").write_text(json.dumps(template, indent=2) + "\n", encoding="utf-8")
        refs[item] = ItemRef(arm=it.arm, case_id=it.case_id, judge=it.judge, prompt_sha256=prompt_sha256(it.prompt))
        names.append((item, it.judge))
    atomic_write_text(dest / "README.md", readme(names))
    mapping = PacketMapping(created_at=datetime.now(UTC).isoformat(timespec="seconds"),
                            packets_dir=str(dest.resolve()), blind=blind, seed=seed, items=refs)
    atomic_write_text(mpath, mapping.model_dump_json(indent=2) + "\n")
    return mapping, mpath


def write_packets(
    dest: str | Path,
    entries: Iterable[PacketEntry],
    *,
    blind: bool = True,
    seed: int | None = None,
    mapping_path: str | Path | None = None,
    documents: Mapping[str, tuple[str, str]] | None = None,
) -> tuple[PacketMapping, Path]:
    """Write one packet per entry under ``dest`` (see the module doc); returns ``(mapping, mapping path)``.

    ``documents`` maps article id → ``(title, body)``; when given, each reference-based item carries its
    case's required documents. Raises ``UserError`` when ``dest`` already holds files, when the mapping
    would land inside ``dest``, or when there is nothing to judge.
    """
    entries = list(entries)
    if not entries:
        raise UserError("no accepted output to judge: no packet written")
    items = []
    for e in entries:
        files = {"case.json": json.dumps(_case_dump(e.case), indent=2, ensure_ascii=False) + "\n"}
        if JUDGES[e.judge].needs_reference:
            ref = {"reference_guidance": e.reference.reference_guidance,
                   "required_documents": list(e.reference.required_documents),
                   "expected_actions": list(e.reference.expected_actions)}
            files["reference.json"] = json.dumps(ref, indent=2, ensure_ascii=False) + "\n"
            if documents is not None:
                for aid in e.reference.required_documents:
                    if aid in documents:
                        title, body = documents[aid]
                        files[f"documents/{aid}.md"] = f"# {title}\n\n{body}"
        files["candidate.json"] = json.dumps(_candidate(e.judge, e.output), indent=2, ensure_ascii=False) + "\n"
        items.append(PacketItem(arm=e.arm, case_id=e.case.case_id, judge=e.judge,
                                name=f"{e.arm}__{e.case.case_id}__{e.judge}", prompt=e.prompt(), files=files))
    from skillrag.evaluation.report import render_template

    def readme(names: list[tuple[str, str]]) -> str:
        return render_template("judge_packets.md.j2", items=names, judges={j: JUDGES[j].description for _, j in names})

    return write_items(dest, items, readme=readme, blind=blind, seed=seed, mapping_path=mapping_path)


def load_mapping(path: str | Path) -> PacketMapping:
    """Read a mapping written by ``write_packets``; ``MalformedSourceError`` naming the file otherwise."""
    p = Path(path)
    try:
        return PacketMapping.model_validate_json(p.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise MalformedSourceError(p, "no such mapping file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise MalformedSourceError(p, f"cannot read ({exc})") from None
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(x) for x in err["loc"]) or "(file)"
        raise MalformedSourceError(p, f"not a packet mapping: {where}: {err['msg']}") from None


_WORDS = {"accept": "accept", "yes": "accept", "true": "accept", "pass": "accept",
          "reject": "reject", "no": "reject", "false": "reject", "fail": "reject"}


def _verdict(value: Any) -> tuple[str | None, str | None, bool]:
    """``(verdict, error, cast)``: ``cast`` is False for an empty verdict (no vote)."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None, None, False
    if isinstance(value, bool):
        return ("accept" if value else "reject"), None, True
    if isinstance(value, str):
        word = _WORDS.get(value.strip().lower())
        if word is None:
            word = parse_verdict(value)
        if word is not None:
            return word, None, True
    return None, f"unparseable verdict {str(value)[:60]!r} (accept or reject)", True


@dataclass
class VoteSet:
    """Votes read back: ``votes[(arm, case_id, judge)]`` in reading order; ``items[key]`` the item id
    (and its prompt hash) each key came from when a mapping resolved it."""

    votes: dict[tuple[str, str, str], list[JudgeVote]] = field(default_factory=dict)
    hashes: dict[tuple[str, str, str], str] = field(default_factory=dict)
    mapping: PacketMapping | None = None
    source: str = ""

    @property
    def judges(self) -> list[str]:
        found = {k[2] for k in self.votes} | {r.judge for r in (self.mapping.items.values() if self.mapping else [])}
        return [j for j in JUDGES if j in found]

    def expected(self) -> set[tuple[str, str, str]]:
        """Every (arm, case, judge) the mapping lists (what packets were written for)."""
        return {(r.arm, r.case_id, r.judge) for r in self.mapping.items.values()} if self.mapping else set()


def _records(source: Path) -> list[tuple[str, Any]]:
    """``[(where, record)]`` from a packets folder, a JSONL file or a JSON file."""
    def load(path: Path) -> Any:
        try:
            return json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError) as exc:
            raise MalformedSourceError(path, f"cannot read ({exc})") from None
        except json.JSONDecodeError as exc:
            raise MalformedSourceError(path, f"not JSON ({exc.msg} at line {exc.lineno})") from None

    if source.is_dir():
        files = sorted(source.glob("*/verdict.json"))
        if not files:
            raise UserError(f"{source}: no ITEM/verdict.json files (is it a packets folder?)")
        out: list[tuple[str, Any]] = []
        for f in files:
            data = load(f)
            if isinstance(data, dict) and "item" not in data and "arm" not in data:
                data = {**data, "item": f.parent.name}
            out.append((f"{f.parent.name}/verdict.json", data))
        return out
    if not source.is_file():
        raise MalformedSourceError(source, "no such verdicts file or packets folder")
    if source.suffix == ".jsonl":
        out = []
        try:
            lines = source.read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError) as exc:
            raise MalformedSourceError(source, f"cannot read ({exc})") from None
        for n, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                out.append((f"line {n}", json.loads(line)))
            except json.JSONDecodeError as exc:
                raise MalformedSourceError(source, f"line {n}: not JSON ({exc.msg})") from None
        return out
    data = load(source)
    if isinstance(data, dict) and isinstance(data.get("votes"), list) and "item" not in data:
        data = data["votes"]
    items = data if isinstance(data, list) else [data]
    return [(f"record {i}", r) for i, r in enumerate(items)]


def read_votes(source: str | Path, mapping: PacketMapping | None = None, *,
               judges: Collection[str] | None = None) -> VoteSet:
    """Read every vote in ``source`` (a filled packets folder, ``.jsonl`` or ``.json``; see the module doc).

    ``judges``: the judge names a vote may name (default: the evaluation judges, ``JUDGES``; the link
    audit's packets pass ``("link",)``). Raises ``MalformedSourceError`` naming the file and the record
    (line / item) for a record that is not an object, names no item (or arm + case_id + judge), names an
    item the mapping lacks, or names an unknown judge. A verdict that is not accept/reject is a failed
    vote, not an error.
    """
    known = tuple(JUDGES) if judges is None else tuple(judges)
    src = Path(source)
    result = VoteSet(mapping=mapping, source=str(src))
    for where, rec in _records(src):
        subvotes: list[Any]
        if not isinstance(rec, dict):
            raise MalformedSourceError(src, f"{where}: expected a JSON object, got {type(rec).__name__}")
        if "item" in rec and rec["item"] not in (None, ""):
            if mapping is None:
                raise MalformedSourceError(src, f"{where}: names item {rec['item']!r}; pass the mapping file "
                                                "(--mapping) that write_packets wrote")
            ref = mapping.items.get(str(rec["item"]))
            if ref is None:
                raise MalformedSourceError(src, f"{where}: item {rec['item']!r} is not in the mapping")
            key = (ref.arm, ref.case_id, ref.judge)
            result.hashes[key] = ref.prompt_sha256
        else:
            missing = [f for f in ("arm", "case_id", "judge") if not isinstance(rec.get(f), str) or not rec.get(f)]
            if missing:
                raise MalformedSourceError(src, f"{where}: needs 'item' (blind packets) or 'arm', 'case_id' and "
                                                f"'judge' (missing: {', '.join(missing)})")
            key = (rec["arm"], rec["case_id"], rec["judge"])
        if key[2] not in known:
            raise MalformedSourceError(src, f"{where}: judge {key[2]!r} unknown (choose from: {', '.join(known)})")
        subvotes = rec["votes"] if isinstance(rec.get("votes"), list) else [rec]
        bucket = result.votes.setdefault(key, [])
        for v in subvotes:
            if not isinstance(v, dict):
                raise MalformedSourceError(src, f"{where}: a vote must be an object with 'verdict'")
            verdict, error, cast = _verdict(v.get("verdict"))
            if not cast:
                continue
            reason = v.get("reason")
            voter = v.get("voter")
            bucket.append(JudgeVote(verdict=verdict, error=error,  # type: ignore[arg-type]
                                    tail=str(reason)[-300:] if reason else "",
                                    voter=str(voter) if voter else None))
        if not bucket:
            del result.votes[key]
    return result
