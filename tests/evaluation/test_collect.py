"""Reading runs others saved: tool-log attribution, cost records, and what RUNS_DIR holds per case."""

from __future__ import annotations

import json
from pathlib import Path

from skillrag.evaluation.collect import attribute_calls, collect_runs, read_tool_log, record_from_calls
from skillrag.evaluation.metrics import RunCost


def call(tool, ok=True, ms=10.0, at="2026-01-01T00:00:00.000+00:00", **args):
    return {"skill": "cs-guidance", "tool": tool, "args": args, "ms": ms, "ok": ok, "error": None, "at": at}


def sequential_log():
    return [
        call("load_case", case_id="a"),
        call("retrieve", query="q1"),
        call("retrieve", query="q2", ok=False),  # a failed query is logged but not counted
        call("get_article", article_id="x"),
        call("save_output", ok=False, case_id="a"),
        call("save_output", case_id="a"),
        call("load_case", case_id="b"),
        call("retrieve", query="q3"),
        call("load_case", case_id="c"),  # b never saved: its calls still end at c's first call
        call("retrieve", query="q4"),
        call("save_output", case_id="c"),
    ]


def test_interleaved_calls_that_name_their_case_are_split_exactly():
    # two harnesses working two cases at once on one workspace: each call names its case
    def named(cid, tool, **args):
        return call(tool, **args) | {"case_id": cid}

    log = [
        named("a", "load_case", case_id="a"),
        named("b", "load_case", case_id="b"),
        named("a", "retrieve", query="qa"),
        named("b", "retrieve", query="qb1"),
        named("b", "retrieve", query="qb2"),
        named("a", "get_article", article_id="x"),
        named("b", "save_output", case_id="b"),
        named("a", "save_output", case_id="a"),
    ]
    segs, amb = attribute_calls(log)
    assert amb == set()
    assert [c["args"].get("query") for c in segs["b"] if c["tool"] == "retrieve"] == ["qb1", "qb2"]
    assert [c["tool"] for c in segs["a"]] == ["load_case", "retrieve", "get_article", "save_output"]
    # the same log without the case field cannot be split honestly: both cases are ambiguous
    _, amb_unnamed = attribute_calls([{k: v for k, v in c.items() if k != "case_id"} for c in log])
    assert amb_unnamed == {"a", "b"}


def test_sequential_log_is_split_by_case():
    segs, amb = attribute_calls(sequential_log())
    assert amb == set()
    assert [c["tool"] for c in segs["a"]] == ["load_case", "retrieve", "retrieve", "get_article",
                                              "save_output", "save_output"]
    assert [c["tool"] for c in segs["b"]] == ["load_case", "retrieve"]
    assert [c["args"].get("query") for c in segs["c"]] == [None, "q4", None]


def test_interleaved_or_rerun_cases_are_ambiguous_not_guessed():
    log = [call("load_case", case_id="a"), call("load_case", case_id="b"), call("retrieve", query="?"),
           call("save_output", case_id="a"), call("save_output", case_id="b"), call("load_case", case_id="c")]
    segs, amb = attribute_calls(log)
    assert amb == {"a", "b"} and list(segs) == ["c"]
    # a case re-run after another: both spans overlap, neither gets the other's calls
    log = [call("load_case", case_id="a"), call("save_output", case_id="a"), call("load_case", case_id="b"),
           call("save_output", case_id="b"), call("load_case", case_id="a"), call("save_output", case_id="a")]
    segs, amb = attribute_calls(log)
    assert amb == {"a", "b"} and segs == {}
    # a span nested inside another is caught too
    log = [call("load_case", case_id="a"), call("load_case", case_id="b"), call("load_case", case_id="c"),
           call("save_output", case_id="c"), call("save_output", case_id="a")]
    assert attribute_calls(log)[1] == {"a", "b", "c"}


def test_record_from_calls_counts_successful_calls_and_wall_time():
    calls = [call("load_case", at="2026-01-01T00:00:00.000+00:00", ms=5, case_id="a"),
             call("retrieve", at="2026-01-01T00:00:01.000+00:00", ms=20, query="q1"),
             call("retrieve", ok=False, at="2026-01-01T00:00:02.000+00:00", ms=4, query="q2"),
             call("get_article", at="2026-01-01T00:00:03.000+00:00", ms=2, article_id="x"),
             call("save_output", ok=False, at="2026-01-01T00:00:10.000+00:00", ms=30, case_id="a"),
             call("save_output", at="2026-01-01T00:00:20.000+00:00", ms=50, case_id="a")]
    rec = record_from_calls("a", calls, "tool log")
    assert rec["queries"] == ["q1"] and rec["fetches"] == ["x"]
    assert (rec["saves"], rec["retries"]) == (2, 1)
    assert rec["wall_ms"] == 20_050.0 and rec["search_ms"] == 24.0
    cost = RunCost.from_record(rec)
    assert (cost.queries, cost.fetches, cost.tokens) == (1, 1, None)
    assert cost.seconds == 20.05 and cost.search_seconds == 0.024
    assert abs(cost.generation_seconds - 20.026) < 1e-9


def test_read_tool_log_skips_cut_lines_and_other_skills(tmp_path: Path):
    p = tmp_path / "tool_calls.jsonl"
    lines = [json.dumps(c) for c in sequential_log()]
    lines.insert(1, json.dumps({**call("retrieve", query="other skill"), "skill": "evidence-qa"}))
    p.write_text("\n".join(lines) + '\n{"tool": "retr', encoding="utf-8")
    log = read_tool_log(p, skill="cs-guidance")
    assert log.bad_lines == 1 and len(log.calls) == len(sequential_log())


def test_collect_prefers_record_json_then_tool_log_then_audit(tmp_path: Path):
    runs = tmp_path / "runs"
    for cid in ("a", "b", "f", "d"):
        (runs / cid).mkdir(parents=True)
    out = {"case_id": "a", "guidance": "g", "snippets": [], "n_snippets": 0, "articles_consulted": []}
    (runs / "a" / "output.json").write_text(json.dumps(out))
    (runs / "a" / "record.json").write_text(json.dumps({"status": "accepted", "queries": ["x"] * 7,
                                                         "fetches": [], "wall_ms": 5}))
    (runs / "b" / "output.json").write_text(json.dumps({**out, "case_id": "b"}))
    audit = {"tool_calls": [call("load_case", case_id="f"), call("retrieve", query="q"),
                            call("retrieve", query="r")]}  # f is not in the tool log
    (runs / "f" / "output.json").write_text(json.dumps({**out, "case_id": "f", "audit": audit}))
    (runs / "d" / "output.json").write_text("{not json")
    log_path = tmp_path / "tool_calls.jsonl"
    log_path.write_text("".join(json.dumps(c) + "\n" for c in sequential_log()))
    got = collect_runs(runs, ["a", "b", "f", "d", "e"], tool_logs=[read_tool_log(log_path)])
    assert got["a"].cost_source == "record.json" and RunCost.from_record(got["a"].record).queries == 7
    assert got["b"].cost_source == "tool_log" and got["b"].record["queries"] == ["q3"]
    assert got["f"].cost_source == "audit" and got["f"].record["queries"] == ["q", "r"]
    assert got["d"].output is None and "not JSON" in got["d"].output_error and got["d"].present
    assert not got["e"].present and got["e"].output is None and got["e"].cost_source is None
