"""Where the LoCoMo dev conversations are, for the tests that import them.

`../shared/data/locomo-dev` beside the checkout (this workplace and its CI), else the
folder named by `AXIOM_LOCOMO_DEV`, else `/work/shared/data/locomo-dev`: a clone made
elsewhere (say under /tmp) still finds them.
"""

from __future__ import annotations

import os
from pathlib import Path


def _find() -> Path:
    candidates = [
        Path(__file__).resolve().parents[2] / "shared" / "data" / "locomo-dev",
        Path(os.environ.get("AXIOM_LOCOMO_DEV", "/nonexistent")),
        Path("/work/shared/data/locomo-dev"),
    ]
    return next((c for c in candidates if (c / "26.json").is_file()), candidates[0])


LOCOMO_DEV = _find()
