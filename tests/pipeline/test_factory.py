"""The configured pipeline names, in its build runs, the embedder the writer really uses."""

from __future__ import annotations

import pytest

from axiom.outbox.config import configured_embedding_version
from axiom.pipeline.factory import configured_pipeline


def test_the_build_spec_records_the_default_embedder(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AXIOM_EMBEDDER", raising=False)
    spec = configured_pipeline().spec
    assert spec.embedder_model == "e5"
    assert spec.embedding_version == configured_embedding_version()
    assert spec.embedding_version.startswith("multilingual-e5-small@")


def test_the_build_spec_records_minilm_when_chosen(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AXIOM_EMBEDDER", "minilm")
    spec = configured_pipeline().spec
    assert spec.embedder_model == "minilm"
    assert spec.embedding_version.startswith("all-MiniLM-L6-v2@")


def test_no_embedder_is_recorded_as_none(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AXIOM_EMBEDDER", "none")
    spec = configured_pipeline().spec
    assert (spec.embedder_model, spec.embedding_version) == ("none", "none")
