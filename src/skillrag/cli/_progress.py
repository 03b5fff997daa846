"""The CLI's progress display for long work (rich's ``Progress``, on stderr): one bar layout for every
command, and the callback that gives each named piece of work (an arm) its own bar."""

from __future__ import annotations

from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn

from skillrag.cli._common import err_console

__all__ = ["BarPerName", "progress_bar"]


def progress_bar(
    label: str = "{task.description}", *, detail: str | None = None, transient: bool = True, disable: bool = False
) -> Progress:
    """A progress display on stderr: ``label``, the bar, done/total, ``detail`` when given, and the time
    elapsed. ``label`` and ``detail`` are rich column templates (``{task.description}``,
    ``{task.fields[last]}``); ``transient`` clears the display when it stops, ``disable`` shows none."""
    columns = [TextColumn(label), BarColumn(), MofNCompleteColumn()]
    if detail is not None:
        columns.append(TextColumn(detail))
    return Progress(*columns, TimeElapsedColumn(), console=err_console, transient=transient, disable=disable)


class BarPerName:
    """An ``on_progress(name, done, total)`` callback: one bar per name in ``progress``, described by
    ``label`` (``{}`` is the name). The display starts at the first report, when it is not running yet
    (so a setup error before it stays one clean line), and ``stop`` ends it only if a report came."""

    def __init__(self, progress: Progress, label: str = "{}") -> None:
        self.progress = progress
        self.label = label
        self.tasks: dict[str, TaskID] = {}

    def __call__(self, name: str, done: int, total: int) -> None:
        if not self.tasks:
            self.progress.start()
        if name not in self.tasks:
            self.tasks[name] = self.progress.add_task(self.label.format(name), total=total)
        self.progress.update(self.tasks[name], completed=done)

    def stop(self) -> None:
        if self.tasks:
            self.progress.stop()
