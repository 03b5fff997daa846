"""After-the-answer scoring: the judge starts only once the response has gone out, never holds it, and
a judge that raises leaves the answer as it was. Real uvicorn server, events instead of sleeps."""

from __future__ import annotations

import hashlib
import json
import threading
from typing import Any

import httpx
import pytest

from skillrag.errors import ConfigError
from skillrag.evaluation.online import read_scores
from skillrag.evaluation.testing import RuleJudge
from skillrag.service.scoring import JudgeScorer
from skillrag.service.testing import serve_app
from skillrag.tracing.testing import one, record_spans

from .conftest import events_of, first

QUESTION = {"question": "I lost my card, what do I do?", "thread_id": "s1", "skill": "cards"}


class Timeline:
    """One ordered log of what happened, written from the server, the judge and the test."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.events: list[str] = []

    def add(self, what: str) -> None:
        with self.lock:
            self.events.append(what)


def mark_response_end(app: Any, timeline: Timeline) -> Any:
    """ASGI wrapper that logs ``response sent`` when the app sends the last body message of /chat."""

    async def wrapped(scope, receive, send):
        async def logged(message):
            if scope["type"] == "http" and scope["path"] == "/chat" and message["type"] == "http.response.body" \
                    and not message.get("more_body", False):
                timeline.add("response sent")
            await send(message)

        await app(scope, receive, logged)

    return wrapped


def gated_judge(timeline: Timeline, gate: threading.Event, *, fail: bool = False) -> RuleJudge:
    def rule(prompt: str) -> str:
        timeline.add("judge started")
        assert gate.wait(60), "the test never opened the gate"
        if fail:
            raise RuntimeError("the judge broke")
        return "The answer resolves the question.\nVERDICT: accept"

    return RuleJudge(rule)


def _scorer(threads, judge, done: threading.Event, timeline: Timeline) -> JudgeScorer:
    def on_done(item, scores):
        timeline.add("scores stored")
        done.set()

    return JudgeScorer(judge.model, threads=threads, model_name="rule-judge", on_done=on_done)


def test_the_judge_runs_after_the_response_and_never_holds_it(make_app, threads):
    timeline, gate, done = Timeline(), threading.Event(), threading.Event()
    judge = gated_judge(timeline, gate)
    app = make_app(scorer=_scorer(threads, judge, done, timeline))
    with serve_app(mark_response_end(app, timeline)) as url, httpx.Client(base_url=url, timeout=20) as c:
        ev = events_of(c.post("/chat", json=QUESTION))  # whole, while the judge waits at the gate
        timeline.add("client has the answer")
        assert not done.is_set() and threads.scores("s1::cards", 1) is None
        gate.set()
        assert done.wait(30)
    d = first(ev, "done")
    assert d["status"] == "ok" and d["turn"] == 1
    # the order is the server's own: the last byte went out before the judge was even started
    assert timeline.events.index("response sent") < timeline.events.index("judge started")
    assert timeline.events.index("client has the answer") < timeline.events.index("scores stored")
    scores = threads.scores("s1::cards", 1)
    assert scores["error"] is None and scores["judge_model"] == "rule-judge" and scores["source"] == "service"
    assert scores["judges"]["correctness"]["decision"] is True
    # the judge saw the question as the case and the answer (which quotes its verified sources)
    prompt = judge.prompts[0]
    assert QUESTION["question"].split(",")[0] in prompt
    assert all(c["snippet"] in prompt for c in d["citations"]) and d["citations"]


def test_a_judge_that_raises_leaves_the_answer_as_it_was(make_app, threads, tmp_path):
    from skillrag.service import ThreadStore

    plain_threads = ThreadStore(tmp_path / "plain.sqlite")
    with serve_app(make_app(threads=plain_threads)) as url, httpx.Client(base_url=url, timeout=20) as c:
        expected = events_of(c.post("/chat", json=QUESTION))
    timeline, gate, done = Timeline(), threading.Event(), threading.Event()
    gate.set()
    app = make_app(scorer=_scorer(threads, gated_judge(timeline, gate, fail=True), done, timeline))
    with record_spans() as exporter:
        with serve_app(app) as url, httpx.Client(base_url=url, timeout=20) as c:
            got = events_of(c.post("/chat", json=QUESTION))
            assert done.wait(30)
        judge_span = one(exporter.get_finished_spans(), "skillrag.judge")
    def strip(evs):  # what differs between any two runs of a turn: timings and the trace id
        return [(n, {k: v for k, v in d.items() if k not in ("ms", "trace_id")}) for n, d in evs]

    assert strip(got) == strip(expected)  # the same stream, event for event
    assert threads.history("s1::cards")[0].answer == plain_threads.history("s1::cards")[0].answer
    scores = threads.scores("s1::cards", 1)
    assert scores["judges"] == {} and scores["error"] == "RuntimeError: the judge broke"
    assert judge_span.status.status_code.name == "ERROR"
    assert judge_span.attributes["skillrag.judge.trace_id"] == first(got, "done")["trace_id"]


def test_a_scorer_that_cannot_take_the_answer_does_not_touch_it(make_app):
    class Broken:
        def submit_answer(self, item):
            raise RuntimeError("queue is gone")

        submit_run = submit_answer

        def close(self):
            pass

    with serve_app(make_app(scorer=Broken())) as url, httpx.Client(base_url=url, timeout=20) as c:
        assert first(events_of(c.post("/chat", json=QUESTION)), "done")["status"] == "ok"


def test_an_accepted_run_gets_scores_beside_its_output(make_app, threads, tmp_path):
    folder = tmp_path / "runs" / "case-1"
    folder.mkdir(parents=True)
    output = {"case_id": "case-1", "guidance": "1. Freeze the card.", "snippets": [
        {"source_article": "card_lost", "text": "freeze the card in the app first"}]}
    finished = threading.Event()

    def runner(case, harness, skill):
        (folder / "output.json").write_text(json.dumps(output), encoding="utf-8")
        return {"status": "accepted", "output": output,
                "record": {"output_path": str(folder / "output.json"), "trace_id": "ab" * 16}}

    judge = RuleJudge(lambda prompt: "VERDICT: reject")
    scorer = JudgeScorer(judge.model, threads=threads, model_name="rule-judge",
                         on_done=lambda item, scores: finished.set())
    with serve_app(make_app(run_runner=runner, scorer=scorer)) as url, httpx.Client(base_url=url) as c:
        r = c.post("/runs", json={"case": {"case_id": "case-1", "contact_reason": "Lost card abroad"}})
        assert r.status_code == 202
        assert finished.wait(30)
        assert c.get(f"/runs/{r.json()['id']}").json()["status"] == "accepted"
    scores = read_scores(folder)
    assert scores["judges"]["correctness"]["decision"] is False and scores["trace_id"] == "ab" * 16
    assert scores["output_sha256"] == hashlib.sha256((folder / "output.json").read_bytes()).hexdigest()
    assert "Lost card abroad" in judge.prompts[0] and "1. Freeze the card." in judge.prompts[0]


def test_live_judges_are_reference_free(threads):
    with pytest.raises(ConfigError, match="guidance_match need.* a reference.*eval score"):
        JudgeScorer("test", threads=threads, judges=["guidance_match"])
