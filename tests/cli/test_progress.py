"""The CLI's one progress display: its layout and the one-bar-per-arm callback."""

from rich.progress import TextColumn

from skillrag.cli._common import err_console
from skillrag.cli._progress import BarPerName, progress_bar


def test_progress_bar_is_label_bar_count_detail_time_on_stderr():
    plain = progress_bar("ingest")
    assert plain.live.console is err_console and plain.live.transient
    assert len(plain.columns) == 4
    detailed = progress_bar("[bold]{task.description}", detail="{task.fields[last]}", transient=False)
    assert len(detailed.columns) == 5 and not detailed.live.transient
    assert isinstance(detailed.columns[3], TextColumn) and detailed.columns[3].text_format == "{task.fields[last]}"


def test_bar_per_name_adds_one_task_per_name_and_stops_only_after_a_report():
    progress = progress_bar(disable=True)
    bars = BarPerName(progress, label="scoring {}")
    bars.stop()  # nothing reported yet: nothing to stop
    assert not bars.tasks
    bars("a", 1, 3)
    bars("b", 0, 2)
    bars("a", 2, 3)
    assert [t.description for t in progress.tasks] == ["scoring a", "scoring b"]
    assert progress.tasks[0].completed == 2 and progress.tasks[0].total == 3
    bars.stop()
