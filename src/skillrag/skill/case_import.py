"""Turn any JSON / JSONL dialogue set into cases, through a small field mapping.

A mapping says where each case field is found in a source record, as a dotted path (``scenario.flow``;
a number indexes a list, ``*`` maps over one). It is a YAML file (``--mapping``) or ``--map FIELD=PATH``
options, or both (the options win)::

    records: dev                      # where the list of records is in the file (omit: the file is the list)
    source: abcd                      # recorded in each case's `source`
    case_id: convo_id
    contact_reason: scenario.reason   # omit: the first customer message
    contact_reason_path: [scenario.flow, scenario.subflow]      # several paths are concatenated
    case_notes:                       # a path, a list of paths, or {label: path} for "label: value" notes
      Customer: scenario.personal.customer_name
    case_messages: {path: original, roles: [customer], max: 3}  # or just a path
    ground_truth:
      reference_guidance: resolution.summary
      required_documents: resolution.articles
      expected_tools: {path: scenario.subflow, lookup: kb.json} # a table: value -> mapped value
      expected_actions: resolution.actions
      extra:                          # any further ground truth, kept for evaluation only
        subflow: scenario.subflow

A field is ``PATH``, ``[PATH, ...]`` or ``{path, lookup, default, optional}``: ``lookup`` maps the value found
through a table (a mapping, or a JSON file relative to the mapping file); ``default`` is used when a record
lacks the path; ``optional: true`` skips the field for such a record. Otherwise a missing path is an error.
A ``null`` in a list field (``contact_reason_path``, ``case_notes``, ``required_documents``, ``expected_tools``,
``expected_actions``) is an empty list: ``"actions": null`` imports as no expected actions.

``--map FIELD=PATH`` options name a case field, ``ground_truth.NAME`` (``gt.NAME``), or any other name, which goes
to ``ground_truth.extra`` (``--map subflow=scenario.subflow``).

Messages: a message is ``[speaker, text]`` or an object with a role (``role``, ``speaker``, ``sender``,
``from``, ``author``, ``participant``) and a text (``content``, ``text``, ``utterance``, ``message``,
``body``, ``value``). Roles are normalised (``user``, ``client``, ``caller`` → ``customer``;
``assistant``, ``rep``, ``representative``, ``support`` → ``agent``; ``role_map`` adds more); ``roles``
keeps only those roles and ``max`` the first N messages after that filter. Keep to what the agent may see
at the start of a case: later agent turns and system actions often carry the resolution.

Ids: a source id that is a valid case id is kept; another is turned into one (characters outside
letters, digits and ``_ . - + ( ) :`` become ``-``) and the original is kept in the record's
``source_id``. Every problem is one ``MalformedSourceError`` naming the file, the record and the field.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from skillrag.errors import ConfigError, MalformedSourceError, UserError
from skillrag.skill.cases import CaseRecord, Message, _GroundTruthBody
from skillrag.workspace.files import read_text_file
from skillrag.workspace.ids import make_id

__all__ = ["FieldSpec", "GroundTruthMap", "ImportMapping", "MessageMap", "import_cases", "load_mapping", "parse_maps"]

_ROLE_KEYS = ("role", "speaker", "sender", "from", "author", "participant")
_TEXT_KEYS = ("content", "text", "utterance", "message", "body", "value")
_ROLES = {"user": "customer", "client": "customer", "caller": "customer", "human": "customer", "cust": "customer",
          "customer": "customer", "assistant": "agent", "rep": "agent", "representative": "agent",
          "support": "agent", "agent": "agent", "system": "system"}
_MISSING = object()


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


def _as_spec(value: Any) -> Any:
    if isinstance(value, (str, list)):
        return {"path": value}
    return value


class FieldSpec(_Strict):
    """Where one field is: ``path`` (dotted; several are concatenated), an optional ``lookup`` table
    (or JSON file), a ``default`` for records that lack the path, or ``optional`` to skip them."""

    path: str | list[str]
    lookup: dict[str, Any] | str | None = None
    default: Any = None
    optional: bool = False

    @property
    def paths(self) -> list[str]:
        return [self.path] if isinstance(self.path, str) else list(self.path)


class MessageMap(_Strict):
    """Where the transcript is, and which of it the agent may see."""

    path: str
    roles: list[str] | None = Field(None, description="Keep only these roles (after normalisation).")
    max: int | None = Field(None, ge=1, description="Keep the first N messages (after the role filter).")
    role_map: dict[str, str] = Field(default_factory=dict, description="Source role -> role, before the rest.")
    optional: bool = False


class GroundTruthMap(_Strict):
    reference_guidance: FieldSpec | None = None
    required_documents: FieldSpec | None = None
    expected_tools: FieldSpec | None = None
    expected_actions: FieldSpec | None = None
    extra: dict[str, FieldSpec] = Field(default_factory=dict)

    @field_validator("reference_guidance", "required_documents", "expected_tools", "expected_actions",
                     mode="before")
    @classmethod
    def _fields(cls, v: Any) -> Any:
        return _as_spec(v)

    @field_validator("extra", mode="before")
    @classmethod
    def _extra(cls, v: Any) -> Any:
        return {k: _as_spec(x) for k, x in v.items()} if isinstance(v, dict) else v


class ImportMapping(_Strict):
    """The whole mapping (see the module doc)."""

    records: str | None = Field(None, description="Dotted path to the list (or id-keyed object) of records.")
    source: str | None = Field(None, description="Name recorded in each case's `source`.")
    case_id: FieldSpec
    contact_reason: FieldSpec | None = None
    contact_reason_path: FieldSpec | None = None
    case_notes: FieldSpec | dict[str, FieldSpec] | None = None
    case_messages: MessageMap | None = None
    ground_truth: GroundTruthMap = Field(default_factory=GroundTruthMap)

    @field_validator("case_id", "contact_reason", "contact_reason_path", mode="before")
    @classmethod
    def _spec(cls, v: Any) -> Any:
        return _as_spec(v)

    @field_validator("case_notes", mode="before")
    @classmethod
    def _notes(cls, v: Any) -> Any:
        if isinstance(v, dict) and "path" not in v:
            return {k: _as_spec(x) for k, x in v.items()}
        return _as_spec(v)

    @field_validator("case_messages", mode="before")
    @classmethod
    def _messages(cls, v: Any) -> Any:
        return {"path": v} if isinstance(v, str) else v


# -- reading the mapping ------------------------------------------------------------------------------

_GT_FIELDS = ("reference_guidance", "required_documents", "expected_tools", "expected_actions")
_CASE_PREFIXES = ("case_", "contact_")


def parse_maps(maps: list[str], lookups: list[str] | None = None) -> dict[str, Any]:
    """``--map FIELD=PATH`` and ``--lookup FIELD=FILE`` options as a mapping dict (merged over a YAML).

    ``FIELD`` is a case field, ``ground_truth.NAME`` (``gt.NAME``) for ground truth (a ``NAME`` that is not a
    ground-truth field going to ``extra``), and any other ``NAME`` goes to ``ground_truth.extra`` too
    (``--map subflow=scenario.subflow``); ``PATH`` may list several paths separated by commas. A name that
    looks like a mistyped case field (``case_…``, ``contact_…``) or a bare ground-truth field
    (``expected_tools``: write ``gt.expected_tools``) is refused. Raises ``UserError``.
    """
    out: dict[str, Any] = {}

    def target(field: str) -> tuple[dict[str, Any], str]:
        head, _, rest = field.partition(".")
        if head in ("ground_truth", "gt"):
            if not rest:
                raise UserError(f"--map {field}: name a ground-truth field (ground_truth.NAME)")
            gt = out.setdefault("ground_truth", {})
            rest = rest.removeprefix("extra.")
            if rest in _GT_FIELDS:
                return gt, rest
            return gt.setdefault("extra", {}), rest
        if field in ImportMapping.model_fields and field != "ground_truth":
            return out, field
        if field in _GT_FIELDS:
            raise UserError(f"--map {field}: a ground-truth field; write --map ground_truth.{field}=PATH "
                            f"(or gt.{field})")
        if field.startswith(_CASE_PREFIXES):  # a mistyped case field is not taken for ground truth
            raise UserError(f"--map {field}: unknown field (case_id, contact_reason, contact_reason_path, "
                            "case_notes, case_messages, records, source; ground_truth.NAME for ground truth, "
                            "any other NAME goes to ground_truth.extra)")
        return out.setdefault("ground_truth", {}).setdefault("extra", {}), field

    for spec in maps:
        field, sep, path = spec.partition("=")
        if not sep or not field or not path:
            raise UserError(f"--map {spec!r}: expected FIELD=PATH")
        where, key = target(field.strip())
        paths = [p.strip() for p in path.split(",") if p.strip()]
        if key in ("records", "source"):
            where[key] = path.strip()
        elif key == "case_messages":
            where[key] = {"path": paths[0]}
        else:
            where[key] = {"path": paths if len(paths) > 1 else paths[0]}
    for spec in lookups or []:
        field, sep, file = spec.partition("=")
        if not sep:
            raise UserError(f"--lookup {spec!r}: expected FIELD=FILE")
        where, key = target(field.strip())
        if not isinstance(where.get(key), dict):
            raise UserError(f"--lookup {field}: map the field first (--map {field}=PATH)")
        where[key]["lookup"] = file
    return out


def _merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for k, v in over.items():
        out[k] = _merge(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) and k in (
            "ground_truth", "extra", "case_messages") else v
    return out


def load_mapping(path: str | Path | None = None, overrides: dict[str, Any] | None = None) -> ImportMapping:
    """The mapping from a YAML file and/or ``parse_maps`` overrides; lookup files are read (relative to the
    YAML's folder, else the current folder). Raises ``ConfigError`` naming the file and the bad field."""
    data: dict[str, Any] = {}
    base = Path.cwd()
    name = "--map options"
    if path is not None:
        p = Path(path)
        base, name = p.parent, str(p)
        try:
            loaded = yaml.safe_load(p.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise ConfigError(f"{p}: no such mapping file") from None
        except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
            raise ConfigError(f"{p}: not a YAML mapping ({str(exc).splitlines()[0]})") from None
        if not isinstance(loaded, dict):
            raise ConfigError(f"{p}: a mapping file is a YAML object (case_id: PATH, ...)")
        data = loaded
    data = _merge(data, overrides or {})
    if "case_id" not in data:
        raise ConfigError(f"{name}: the mapping needs case_id (e.g. --map case_id=id)")
    try:
        mapping = ImportMapping.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(x) for x in err["loc"]) or "(mapping)"
        raise ConfigError(f"{name}: {where}: {err['msg']}") from None
    for spec in _specs(mapping):
        if isinstance(spec.lookup, str):
            lp = Path(spec.lookup) if Path(spec.lookup).is_absolute() else base / spec.lookup
            try:
                table = json.loads(lp.read_text(encoding="utf-8"))
            except FileNotFoundError:
                raise ConfigError(f"{name}: lookup file {lp} not found") from None
            except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
                raise ConfigError(f"{name}: lookup file {lp} is not JSON ({exc})") from None
            if not isinstance(table, dict):
                raise ConfigError(f"{name}: lookup file {lp} must hold a JSON object (value -> mapped value)")
            spec.lookup = table
    return mapping


def _specs(m: ImportMapping) -> list[FieldSpec]:
    out = [m.case_id, m.contact_reason, m.contact_reason_path]
    out += list(m.case_notes.values()) if isinstance(m.case_notes, dict) else [m.case_notes]
    gt = m.ground_truth
    out += [gt.reference_guidance, gt.required_documents, gt.expected_tools, gt.expected_actions, *gt.extra.values()]
    return [s for s in out if s is not None]


# -- reading records ----------------------------------------------------------------------------------


def _get(value: Any, path: str) -> Any:
    """The value at dotted ``path`` (``*`` maps over a list), or ``_MISSING``."""
    parts = [p for p in path.split(".") if p != ""]

    def walk(v: Any, i: int) -> Any:
        if i == len(parts):
            return v
        key = parts[i]
        if key == "*":
            if not isinstance(v, list):
                return _MISSING
            got = [walk(x, i + 1) for x in v]
            return [x for x in got if x is not _MISSING]
        if isinstance(v, Mapping):
            return walk(v[key], i + 1) if key in v else _MISSING
        if isinstance(v, list) and re.fullmatch(r"-?\d+", key):
            idx = int(key)
            return walk(v[idx], i + 1) if -len(v) <= idx < len(v) else _MISSING
        return _MISSING

    return walk(value, 0)


class _Record:
    """One source record and how to name it in errors."""

    def __init__(self, file: Path, index: int, data: Any) -> None:
        self.file, self.index, self.data = file, index, data
        self.label = f"record {index}"

    def fail(self, field: str, why: str) -> MalformedSourceError:
        return MalformedSourceError(self.file, f"{self.label}: {field}: {why}")

    def value(self, spec: FieldSpec, field: str, *, listed: bool = False) -> Any:
        """The value(s) of ``spec`` (a list when it names several paths), or ``_MISSING`` if optional.

        ``listed``: the field is a list, so a ``null`` found at the path (present, but null) is an empty
        list rather than a missing value (``"actions": null`` → no actions); a ``default`` still wins."""
        found = []
        for path in spec.paths:
            v = _get(self.data, path)
            if v is None and listed and spec.default is None:
                v = []
            elif v is _MISSING or v is None:
                if spec.default is not None:
                    v = spec.default
                elif spec.optional:
                    continue
                else:
                    raise self.fail(field, f"no value at {path!r}")
            found.append(self._lookup(spec, field, v))
        if not found:
            return _MISSING
        return found[0] if len(found) == 1 else found

    def _lookup(self, spec: FieldSpec, field: str, v: Any) -> Any:
        if not isinstance(spec.lookup, dict):
            return v
        if isinstance(v, list):
            return [self._lookup(spec, field, x) for x in v]
        key = str(v)
        if key not in spec.lookup:
            if spec.default is not None:
                return spec.default
            raise self.fail(field, f"no entry {key!r} in its lookup table")
        return spec.lookup[key]


def _text(rec: _Record, field: str, v: Any, sep: str = " ") -> str:
    if isinstance(v, str):
        return v.strip()
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return str(v)
    if isinstance(v, list) and all(isinstance(x, (str, int, float)) for x in v):
        return sep.join(str(x).strip() for x in v if str(x).strip())
    raise rec.fail(field, f"expected text, got {type(v).__name__}")


def _strings(rec: _Record, field: str, v: Any) -> list[str]:
    items = v if isinstance(v, list) else [v]
    out: list[str] = []
    for x in items:
        if isinstance(x, list):
            out += _strings(rec, field, x)
        elif isinstance(x, (str, int, float)) and not isinstance(x, bool):
            if str(x).strip():
                out.append(str(x).strip())
        else:
            raise rec.fail(field, f"expected text or a list of texts, got {type(x).__name__}")
    return out


def _message(rec: _Record, i: int, m: Any, role_map: Mapping[str, str]) -> Message | None:
    field = f"case_messages[{i}]"
    if isinstance(m, (list, tuple)) and len(m) == 2 and all(isinstance(x, str) for x in m):
        role, text = m
    elif isinstance(m, Mapping):
        role = next((m[k] for k in _ROLE_KEYS if isinstance(m.get(k), str)), None)
        text = next((m[k] for k in _TEXT_KEYS if isinstance(m.get(k), str)), None)
        if role is None or text is None:
            raise rec.fail(field, f"a message needs a role ({'/'.join(_ROLE_KEYS)}) and a text "
                                  f"({'/'.join(_TEXT_KEYS)}); keys found: {', '.join(map(str, m)) or 'none'}")
    else:
        raise rec.fail(field, f"a message is [speaker, text] or an object with a role and a text, "
                              f"got {type(m).__name__}")
    raw = role.strip().lower()
    role = role_map.get(raw) or role_map.get(role.strip()) or _ROLES.get(raw, raw)
    return Message(role=role, content=text.strip()) if text.strip() else None


def _messages(rec: _Record, spec: MessageMap) -> list[Message]:
    v = _get(rec.data, spec.path)
    if v is _MISSING or v is None:
        if spec.optional:
            return []
        raise rec.fail("case_messages", f"no value at {spec.path!r}")
    if not isinstance(v, list):
        raise rec.fail("case_messages", f"expected a list of messages at {spec.path!r}, got {type(v).__name__}")
    msgs = [x for i, m in enumerate(v) if (x := _message(rec, i, m, spec.role_map)) is not None]
    if spec.roles is not None:
        keep = {_ROLES.get(r.lower(), r.lower()) for r in spec.roles}
        msgs = [m for m in msgs if m.role in keep]
    return msgs[: spec.max] if spec.max else msgs


def _valid_id(raw: str) -> str:
    """``raw`` as a case id (``workspace.ids.make_id``: disallowed runs become ``-``); ``""`` when none."""
    return make_id(raw, "case")


def _record_list(file: Path, data: Any, where: str | None) -> list[Any]:
    if where:
        data = _get(data, where)
        if data is _MISSING:
            raise MalformedSourceError(file, f"records: no value at {where!r}")
    if isinstance(data, dict):
        if where is None:
            keys = ", ".join(list(map(str, data))[:8])
            raise MalformedSourceError(file, f"holds an object, not a list of records: name the list with "
                                             f"records (keys: {keys})")
        if all(isinstance(v, dict) for v in data.values()):  # an id-keyed object: the key is `_key`
            return [{"_key": k, **v} for k, v in data.items()]
    if not isinstance(data, list):
        raise MalformedSourceError(file, f"records: expected a list, got {type(data).__name__}")
    return data


def _read(file: Path) -> Any:
    text = read_text_file(file)
    if file.suffix.lower() == ".jsonl":
        out = []
        for n, line in enumerate(text.splitlines(), 1):
            if line.strip():
                try:
                    out.append(json.loads(line))
                except json.JSONDecodeError as exc:
                    raise MalformedSourceError(file, f"line {n}: not JSON ({exc.msg})") from None
        return out
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise MalformedSourceError(file, f"not JSON ({exc.msg} at line {exc.lineno})") from None


def import_cases(path: str | Path, mapping: ImportMapping) -> list[CaseRecord]:
    """Read a JSON (a list, or ``mapping.records`` inside it) or JSONL file of dialogues into case records.

    Raises ``MalformedSourceError`` naming the file, the record (its number, and its id once known) and
    the field for anything that does not fit the mapping; an empty list of records gives ``[]``.
    """
    file = Path(path)
    records = _record_list(file, _read(file), mapping.records)
    out: list[CaseRecord] = []
    seen: dict[str, int] = {}
    for i, data in enumerate(records):
        rec = _Record(file, i, data)
        if not isinstance(data, Mapping):
            raise rec.fail("(record)", f"expected a JSON object, got {type(data).__name__}")
        raw_id = _text(rec, "case_id", rec.value(mapping.case_id, "case_id"))
        cid = _valid_id(raw_id)
        if not cid:
            raise rec.fail("case_id", f"{raw_id!r} cannot be made into a case id")
        rec.label = f"record {i} (id {raw_id!r})"
        if cid in seen:
            raise rec.fail("case_id", f"{cid!r} already used by record {seen[cid]}")
        seen[cid] = i
        messages = _messages(rec, mapping.case_messages) if mapping.case_messages else []
        reason = ""
        if mapping.contact_reason is not None:
            v = rec.value(mapping.contact_reason, "contact_reason")
            reason = "" if v is _MISSING else _text(rec, "contact_reason", v, sep="; ")
        if not reason:
            first = next((m.content for m in messages if m.role == "customer"), "")
            if not first:
                raise rec.fail("contact_reason", "not mapped and no customer message to take it from "
                                                 "(map contact_reason, or case_messages with a customer turn)")
            reason = first
        reason_path: list[str] = []
        if mapping.contact_reason_path is not None:
            v = rec.value(mapping.contact_reason_path, "contact_reason_path", listed=True)
            reason_path = [] if v is _MISSING else _strings(rec, "contact_reason_path", v)
        notes: list[str] = []
        if isinstance(mapping.case_notes, dict):
            for label, spec in mapping.case_notes.items():
                v = rec.value(spec, f"case_notes.{label}")
                if v is not _MISSING:
                    notes.append(f"{label}: {_text(rec, f'case_notes.{label}', v, sep=', ')}")
        elif mapping.case_notes is not None:
            v = rec.value(mapping.case_notes, "case_notes", listed=True)
            notes = [] if v is _MISSING else _strings(rec, "case_notes", v)
        out.append(CaseRecord(
            case_id=cid, contact_reason=reason, contact_reason_path=reason_path, case_notes=notes,
            case_messages=messages, ground_truth=_truth(rec, mapping.ground_truth),
            source=mapping.source, source_id=raw_id if raw_id != cid else None,
        ))
    return out


def _truth(rec: _Record, gt: GroundTruthMap) -> _GroundTruthBody | None:
    body: dict[str, Any] = {}
    if gt.reference_guidance is not None:
        v = rec.value(gt.reference_guidance, "ground_truth.reference_guidance")
        if v is not _MISSING:
            body["reference_guidance"] = _text(rec, "ground_truth.reference_guidance", v, sep="\n")
    for name in ("required_documents", "expected_tools"):
        spec = getattr(gt, name)
        if spec is not None:
            v = rec.value(spec, f"ground_truth.{name}", listed=True)
            if v is not _MISSING:
                body[name] = _strings(rec, f"ground_truth.{name}", v)
    if gt.expected_actions is not None:
        v = rec.value(gt.expected_actions, "ground_truth.expected_actions", listed=True)
        if v is not _MISSING:
            items = v if isinstance(v, list) else [v]
            actions = []
            for x in items:
                if isinstance(x, str):
                    actions.append({"name": x})
                elif isinstance(x, Mapping):
                    actions.append(dict(x))
                else:
                    raise rec.fail("ground_truth.expected_actions",
                                   f"an action is a name or an object, got {type(x).__name__}")
            body["expected_actions"] = actions
    extra = {}
    for name, spec in gt.extra.items():
        v = rec.value(spec, f"ground_truth.extra.{name}")
        if v is not _MISSING:
            extra[name] = v
    if extra:
        body["extra"] = extra
    return _GroundTruthBody(**body) if body else None
