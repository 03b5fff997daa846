"""Export the wiki-maintainer skill: the Agent Skills folder coding agents use to work an agent build
of the navigation layer (``skillrag.wiki.agent``).

The folder is written by the one export machinery (``skill.export.write_skill_folder``): ``SKILL.md``
(the manual, ``skillrag/wiki/prompts/maintainer_skill.md``, with the build's settings), one script per
``skillrag wiki agent`` command (``next``, ``read_page``, ``write_page``, ``release``, ``status``,
``finish``) run through the same launcher as the cs-guidance scripts, ``scripts/config.json`` (the
workspace, the Python that has skillrag) and ``references/`` (the draft's JSON Schema, an example
draft, the build's settings).
"""

from __future__ import annotations

import sys
from pathlib import Path

from skillrag.skill.export import skill_dest, write_skill_folder
from skillrag.workspace import Workspace

__all__ = ["export_maintainer"]


def export_maintainer(ws: Workspace, dest: str | Path, *, overwrite: bool = False) -> Path:
    """Write the wiki-maintainer skill for the agent build open in ``ws`` under ``dest`` (``dest`` itself
    when it is named ``wiki-maintainer``, else ``dest/wiki-maintainer``) and return the folder.

    Raises ``WorkspaceError`` when no agent build is open, ``UserError`` when the folder exists and
    ``overwrite`` is false or it fails the Agent Skills checks."""
    from skillrag.wiki.agent import MAINTAINER_NAME, MAINTAINER_SCRIPTS, AgentBuild, maintainer_skill

    build = AgentBuild(ws)
    front, manual, refs = maintainer_skill(build)
    config = {"skill": MAINTAINER_NAME, "workspace": str(ws.root), "python": sys.executable,
              "prefix": ["wiki", "agent"], "suffix": []}
    return write_skill_folder(skill_dest(dest, MAINTAINER_NAME), front=front, manual=manual,
                              scripts=MAINTAINER_SCRIPTS, config=config, references=refs, overwrite=overwrite)
