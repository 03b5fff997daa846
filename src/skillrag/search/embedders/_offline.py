"""What keeps the local embedders offline: the one place that turns the libraries' network use off.

Measured on onnxruntime 1.32 (Linux wheel): the library carries Microsoft's 1DS telemetry client and,
a few seconds after the first ``InferenceSession``, looks up ``mobile.events.data.microsoft.com`` to
upload events (and keeps an event store under ``~/.cache/Microsoft/DeveloperTools/.onnxruntime``).
``onnxruntime.disable_telemetry_events()`` does not stop it; the environment variable
``ORT_DISABLE_TELEMETRY=1`` does, but only when it is set before ``onnxruntime`` is first imported
(it is read while the library loads). ``tokenizers`` reads ``tokenizer.json`` from disk
(``Tokenizer.from_file``; ``from_pretrained``, which downloads, is never called) and the default
embedder's files come from installed packages, found without importing them.

``import_onnxruntime()`` is how skillrag imports onnxruntime: it sets ``OFFLINE_ENV`` first.
``sentence-transformers`` models are another matter: a Hub name may download on first use unless the
files are installed (``st.py`` loads the packaged MiniLM with ``HF_HUB_OFFLINE=1``).
"""

from __future__ import annotations

import logging
import os
import sys
from types import ModuleType

__all__ = ["OFFLINE_ENV", "import_onnxruntime", "offline_env"]

log = logging.getLogger("skillrag.search")

#: Environment switches set (overriding the caller's value) before an embedding library is imported.
OFFLINE_ENV: dict[str, str] = {
    "ORT_DISABLE_TELEMETRY": "1",  # onnxruntime: no 1DS telemetry upload, no event store on disk
    "HF_HUB_DISABLE_TELEMETRY": "1",  # huggingface_hub (sentence-transformers): no usage pings
}


def offline_env() -> None:
    """Set every ``OFFLINE_ENV`` switch in ``os.environ`` (the process environment native code reads)."""
    os.environ.update(OFFLINE_ENV)


def import_onnxruntime() -> ModuleType:
    """``onnxruntime``, imported with its telemetry off (module doc).

    When something else imported onnxruntime first, without ``ORT_DISABLE_TELEMETRY=1``, its telemetry
    is already running: a warning says so (set the variable in the environment to stop it).
    """
    was_loaded = "onnxruntime" in sys.modules
    before = os.environ.get("ORT_DISABLE_TELEMETRY")
    offline_env()
    import onnxruntime as ort

    if was_loaded and before != "1":
        ort.disable_telemetry_events()  # not enough on its own (module doc), but what is left to do
        log.warning("onnxruntime was imported before skillrag could turn its telemetry off; "
                    "set ORT_DISABLE_TELEMETRY=1 in the environment to keep searches offline")
    return ort
