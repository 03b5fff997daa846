"""`cases import`: any JSON/JSONL dialogue set into cases through a field mapping, with one-line errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from skillrag.cli.main import main
from skillrag.errors import ConfigError, MalformedSourceError, UserError
from skillrag.skill import CaseFile
from skillrag.skill.case_import import import_cases, load_mapping, parse_maps
from skillrag.skill.cases import CaseRecord, write_cases

DATA = Path(__file__).parent / "data"


def test_abcd_shaped_file_imports_with_a_mapping(tmp_path):
    out = tmp_path / "abcd.jsonl"
    assert main(["cases", "import", str(DATA / "abcd_like.json"), "--mapping", str(DATA / "abcd_like_mapping.yaml"),
                 "-o", str(out)]) == 0
    cf = CaseFile(out)
    assert cf.ids() == ["9101", "9102-b"]  # "9102/b" would name a path: turned into a valid id
    first = cf.load("9101")
    assert first.contact_reason == "hi, the jeans I got last week are too small"  # the first customer turn
    assert first.contact_reason_path == ["product_defect"]
    assert first.case_notes == ["Customer: alex rivera", "Membership level: gold", "Order: 5521903"]
    assert [(m.role, m.content) for m in first.case_messages] == [
        ("customer", "hi, the jeans I got last week are too small"),
        ("customer", "can I send them back for a bigger size?")]
    gt = cf.ground_truth("9101")
    assert gt.expected_tools == ["pull-up-account", "validate-purchase", "membership", "enter-details", "update-order"]
    assert gt.extra == {"flow": "product_defect", "subflow": "return_size"}
    seen = json.dumps(first.model_dump(mode="json"))
    for secret in ("return_size", "validate-purchase", "Account has been pulled up", "gold member"):
        assert secret not in seen  # ground truth and later agent turns stay out
    records = [json.loads(x) for x in out.read_text().splitlines()]
    assert records[0]["source"] == "abcd-like" and "source_id" not in records[0]
    assert records[1]["source_id"] == "9102/b"


def test_jsonl_with_map_options_and_utterance_messages(tmp_path):
    out = tmp_path / "u.jsonl"
    assert main(["cases", "import", str(DATA / "utterances.jsonl"), "-o", str(out),
                 "--map", "case_id=id", "--map", "contact_reason=issue", "--map", "case_messages=turns",
                 "--map", "ground_truth.expected_tools=label.steps", "--map", "gt.intent=label.intent",
                 "--roles", "customer"]) == 0
    cf = CaseFile(out)
    assert cf.load("chat-001").case_messages[0].content.startswith("I returned my order")
    assert [m.role for m in cf.load("chat-001").case_messages] == ["customer"]  # "user" normalised, bot dropped
    assert cf.load("chat-002").case_messages[0].content == "Can I still change where my parcel goes?"
    assert cf.ground_truth("chat-002").expected_tools == ["lookup_order", "update_address"]
    assert cf.ground_truth("chat-002").extra == {"intent": "change_address"}


def _mapping(**extra):
    return load_mapping(None, {"case_id": {"path": "id"}, **extra})


@pytest.mark.parametrize(("records", "mapping", "message"), [
    ([{"id": "a", "turns": [{"who": "x", "says": "hi"}]}], {"case_messages": {"path": "turns"}},
     "record 0 (id 'a'): case_messages[0]: a message needs a role"),
    ([{"id": "a", "issue": "x"}, {"id": "b"}], {"contact_reason": {"path": "issue"}},
     "record 1 (id 'b'): contact_reason: no value at 'issue'"),
    ([{"id": "a", "issue": "x"}, {"id": "a", "issue": "y"}], {"contact_reason": {"path": "issue"}},
     "record 1 (id 'a'): case_id: 'a' already used by record 0"),
    ([{"id": "a"}], {}, "record 0 (id 'a'): contact_reason: not mapped and no customer message"),
    ([{"issue": "x"}], {"contact_reason": {"path": "issue"}}, "record 0: case_id: no value at 'id'"),
    ([{"id": "a", "issue": {"deep": 1}}], {"contact_reason": {"path": "issue"}},
     "record 0 (id 'a'): contact_reason: expected text, got dict"),
    ([{"id": "a", "issue": "x", "flow": "f"}],
     {"contact_reason": {"path": "issue"}, "ground_truth": {"expected_tools": {"path": "flow", "lookup": {"g": 1}}}},
     "record 0 (id 'a'): ground_truth.expected_tools: no entry 'f' in its lookup table"),
    (["just text"], {"contact_reason": {"path": "issue"}}, "record 0: (record): expected a JSON object"),
])
def test_errors_name_the_record_and_the_field(tmp_path, records, mapping, message):
    p = tmp_path / "in.json"
    p.write_text(json.dumps(records), encoding="utf-8")
    with pytest.raises(MalformedSourceError) as exc:
        import_cases(p, _mapping(**mapping))
    assert message in str(exc.value) and str(exc.value).startswith(str(p))
    assert "\n" not in str(exc.value)


def test_optional_and_default_fields(tmp_path):
    p = tmp_path / "in.json"
    p.write_text(json.dumps([{"id": "a", "issue": "x"}, {"id": "b", "issue": "y", "cat": "billing"}]))
    recs = import_cases(p, _mapping(contact_reason={"path": "issue"},
                                    contact_reason_path={"path": "cat", "optional": True},
                                    case_notes={"Priority": {"path": "prio", "default": "normal"}}))
    assert [r.contact_reason_path for r in recs] == [[], ["billing"]]
    assert recs[0].case_notes == ["Priority: normal"]


def test_mapping_errors(tmp_path, capsys):
    with pytest.raises(UserError, match="expected FIELD=PATH"):
        parse_maps(["case_id"])
    with pytest.raises(UserError, match="unknown field"):
        parse_maps(["case_note=x"])  # a mistyped case field is not taken for ground truth
    with pytest.raises(UserError, match=r"write --map ground_truth\.expected_tools=PATH"):
        parse_maps(["expected_tools=x"])  # a ground-truth field needs its gt. prefix
    with pytest.raises(ConfigError, match="needs case_id"):
        load_mapping(None, {})
    bad = tmp_path / "m.yaml"
    bad.write_text("case_id: id\nwhatever: 1\n")
    with pytest.raises(ConfigError, match="whatever"):
        load_mapping(bad)
    bad.write_text("case_id: id\nground_truth: {expected_tools: {path: x, lookup: nope.json}}\n")
    with pytest.raises(ConfigError, match="lookup file .*nope.json not found"):
        load_mapping(bad)
    p = tmp_path / "obj.json"
    p.write_text(json.dumps({"train": [], "dev": []}))
    assert main(["cases", "import", str(p), "-o", str(tmp_path / "o.jsonl"), "--map", "case_id=id"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "name the list with records (keys: train, dev)" in err
    assert err.count("\n") == 1 and not (tmp_path / "o.jsonl").exists()


def test_id_keyed_object_of_records(tmp_path):
    p = tmp_path / "obj.json"
    p.write_text(json.dumps({"all": {"x1": {"q": "Where is my parcel?"}, "x2": {"q": "Cancel my plan"}}}))
    recs = import_cases(p, load_mapping(None, {"records": "all", "case_id": "_key", "contact_reason": "q"}))
    assert [(r.case_id, r.contact_reason) for r in recs] == [("x1", "Where is my parcel?"), ("x2", "Cancel my plan")]


def test_messages_written_with_text_are_read_as_content(tmp_path):
    """A case file (what `run` reads) may write a message as {role, text}: it was "content: Field required"."""
    p = tmp_path / "cases.jsonl"
    p.write_text(json.dumps({"case_id": "c1", "contact_reason": "lost card",
                             "case_messages": [{"role": "customer", "text": "I lost my card"}]}) + "\n")
    msg = CaseFile(p).load("c1").case_messages[0]
    assert (msg.role, msg.content) == ("customer", "I lost my card")
    out = tmp_path / "again.jsonl"
    write_cases(out, [CaseRecord.model_validate_json(p.read_text())])
    assert json.loads(out.read_text())["case_messages"] == [{"role": "customer", "content": "I lost my card"}]


def test_map_of_an_unknown_name_goes_to_extra(tmp_path):
    """`--map subflow=...` was "unknown field", though --help says other names go to extra."""
    assert parse_maps(["subflow=scenario.subflow"]) == {"ground_truth": {"extra": {"subflow": {"path": "scenario.subflow"}}}}
    p = tmp_path / "in.json"
    p.write_text(json.dumps([{"id": "a", "issue": "refund", "scenario": {"subflow": "return_size"}}]))
    out = tmp_path / "o.jsonl"
    assert main(["cases", "import", str(p), "-o", str(out), "--map", "case_id=id", "--map", "contact_reason=issue",
                 "--map", "subflow=scenario.subflow"]) == 0
    assert CaseFile(out).ground_truth("a").extra == {"subflow": "return_size"}


def test_null_actions_import_as_no_actions(tmp_path):
    """A null `actions` needed a YAML mapping with a default; a null list is now an empty one."""
    p = tmp_path / "in.json"
    p.write_text(json.dumps([{"id": "a", "issue": "x", "actions": [{"name": "refund"}], "docs": None},
                             {"id": "b", "issue": "y", "actions": None, "docs": ["faq"]}]))
    out = tmp_path / "o.jsonl"
    assert main(["cases", "import", str(p), "-o", str(out), "--map", "case_id=id", "--map", "contact_reason=issue",
                 "--map", "gt.expected_actions=actions", "--map", "gt.required_documents=docs"]) == 0
    cf = CaseFile(out)
    assert cf.ground_truth("a").expected_actions == [{"name": "refund"}] and cf.ground_truth("a").required_documents == []
    assert cf.ground_truth("b").expected_actions == [] and cf.ground_truth("b").required_documents == ["faq"]
    with pytest.raises(MalformedSourceError, match="record 0 \\(id 'a'\\): ground_truth.expected_actions: no value"):
        import_cases(p, _mapping(contact_reason={"path": "issue"},
                                 ground_truth={"expected_actions": {"path": "missing"}}))  # absent is still an error


def test_an_import_never_writes_over_its_own_input(tmp_path, capsys):
    """Found by a new user: `cases import d.jsonl -o d.jsonl` replaced the dialogues with the cases."""
    src = tmp_path / "d.jsonl"
    src.write_text(json.dumps({"id": "a1", "issue": "card lost"}) + "\n", encoding="utf-8")
    before = src.read_bytes()
    rc = main(["cases", "import", str(src), "-o", str(src), "--map", "case_id=id", "--map", "contact_reason=issue"])
    err = capsys.readouterr().err
    assert rc == 2 and err.count("\n") == 1 and "is the file being imported" in err
    assert src.read_bytes() == before
