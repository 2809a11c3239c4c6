"""`eval extraction`: recall and precision of entries against LoCoMo observations, on a
small conversation written for this test, through the real import and pipeline."""

from __future__ import annotations

import json
from pathlib import Path

from axiom.evaluation.extraction import evaluate_files, observations_of
from tests.cli_support import run_cli

CONVERSATION = {
    "speaker_a": "Ana",
    "speaker_b": "Ben",
    "session_1_date_time": "1:00 pm on 3 March, 2024",
    "session_1": [
        {"speaker": "Ana", "dia_id": "D1:1", "text": "Hi Ben! How are you?"},
        {"speaker": "Ben", "dia_id": "D1:2", "text": "I started learning the cello last month."},
        {"speaker": "Ana", "dia_id": "D1:3", "text": "I moved to Porto in January."},
        {"speaker": "Ben", "dia_id": "D1:4", "text": "We adopted a rescue greyhound called Pip."},
        {"speaker": "Ana", "dia_id": "D1:5", "text": "Wow, that sounds lovely!"},
    ],
    "session_1_observation": {
        "Ben": [
            ["Ben started learning the cello.", "D1:2"],
            ["Ben's family adopted a greyhound named Pip.", "D1:4"],
        ],
        "Ana": [
            ["Ana moved to Porto in January.", "D1:3"],
            ["Ana loves greetings.", "D1:1"],
        ],
    },
}


def _file(tmp_path: Path) -> Path:
    path = tmp_path / "conv.json"
    path.write_text(json.dumps(CONVERSATION), encoding="utf-8")
    return path


def test_observations_name_their_evidence_turns() -> None:
    observations = observations_of(CONVERSATION)
    assert [o.dia_ids for o in observations] == [("D1:1",), ("D1:2",), ("D1:3",), ("D1:4",)]


def test_recall_and_precision_follow_the_quoted_turns(tmp_path: Path) -> None:
    report = evaluate_files([_file(tmp_path)]).to_json(verbose=True)
    overall = report["overall"]
    # three statements become entries; the greeting does not, so its observation is missed
    assert overall["observations"] == 4 and overall["entries"] == 3
    assert overall["recall"] == 0.75 and overall["precision"] == 1.0
    assert overall["content_recall"] == 0.75
    assert [m["dia_ids"] for m in report["misses"]] == [["D1:1"]]
    assert report["by_type"]["fact"]["entries"] == 3


def test_the_cli_prints_the_figures_as_json(tmp_path: Path, data_dir: Path) -> None:
    done = run_cli(data_dir, "eval", "extraction", str(_file(tmp_path)), "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["overall"]["recall"] == 0.75


def test_a_file_that_is_not_locomo_is_a_clear_error(tmp_path: Path, data_dir: Path) -> None:
    path = tmp_path / "x.json"
    path.write_text('{"hello": 1}', encoding="utf-8")
    done = run_cli(data_dir, "eval", "extraction", str(path))
    assert done.returncode == 1 and "not a LoCoMo conversation" in done.stderr
