"""`axiom search` in text: each hit leads with its relevance and the match it comes from,
as the search page shows them, and agrees with `--json`."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from axiom.cli.main import main


def test_each_hit_shows_the_relevance_and_match_its_json_carries(
    data_dir: Path,
    sample_session: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("AXIOM_EMBEDDER", "none")
    assert main(["import", "--quiet", str(sample_session)]) == 0
    assert main(["outbox", "drain", "--json", "--quiet"]) == 0
    capsys.readouterr()
    query = ["DuckDB", "event", "store", "--mode", "fts", "-k", "5"]
    assert main(["search", *query, "--json"]) == 0
    hits = json.loads(capsys.readouterr().out)["hits"]
    assert main(["search", *query]) == 0
    lines = re.findall(
        r"^(\w+) +match (\d\.\d\d)  rank (\d\.\d{3}) .*?(\S+:\S+)", capsys.readouterr().out, re.M
    )
    assert hits and len(lines) == len(hits)
    assert [(r, float(m), i) for r, m, _, i in lines] == [
        (h["relevance"], round(h["match"], 2), h["id"]) for h in hits
    ]
