"""schemathesis over the OpenAPI schema, against a real server holding imported and
processed sessions: no server error, no response that breaks its schema, no status the
schema does not document, and schema-valid requests accepted."""

from __future__ import annotations

from collections.abc import Iterator
from traceback import format_exception

import pytest
import requests
import schemathesis
from hypothesis import HealthCheck, given, settings

from axiom.config import AxiomConfig
from axiom.ingest.importer import import_paths, ingest_transcripts
from axiom.outbox.service import configured_writer
from axiom.pipeline.factory import configured_pipeline
from axiom.pipeline.process import process_session
from axiom.store.api_token import ensure_api_token
from tests.conftest import SAMPLE_SESSION
from tests.live_server import migrated_store, runserver
from tests.viewer.conftest import synthetic_transcript

# Over a minute on a busy 2-core machine (mostly the store and server setup): marked slow.
pytestmark = pytest.mark.slow
EXAMPLES_PER_OPERATION = 30


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    """(base URL, API token) of a runserver over a store with real sessions and entries."""
    root = tmp_path_factory.mktemp("schemathesis")
    data, database = migrated_store(root)
    (sid,) = import_paths(database, [SAMPLE_SESSION]).session_ids
    process_session(database, sid, configured_pipeline(AxiomConfig(data_dir=data)))
    ingest_transcripts(database, [synthetic_transcript(n) for n in range(5)])
    with pytest.MonkeyPatch.context() as env:
        env.setenv("AXIOM_EMBEDDER", "e5")
        env.setenv("AXIOM_DATA_DIR", str(data))  # the writer's LanceDB dir
        assert configured_writer(database).drain().remaining == 0  # search has an index
    token = ensure_api_token(data)
    log = root / "runserver.log"
    with runserver(data, log, AXIOM_EMBEDDER="e5") as base:
        yield base, token
    assert "Traceback" not in log.read_text(), log.read_text()


def test_the_api_honours_its_schema(live: tuple[str, str]) -> None:
    base, token = live
    schema = schemathesis.openapi.from_url(f"{base}/api/openapi.json")
    headers = {"Authorization": f"Bearer {token}"}
    # The first search loads the embedding model: do it once before timing-sensitive runs.
    warm = requests.get(f"{base}/api/v1/search", {"q": "warm up"}, headers=headers, timeout=120)
    assert warm.status_code == 200, warm.text
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) >= 12
    failures: list[str] = []

    for operation in operations:

        @given(case=operation.as_strategy())
        @settings(
            max_examples=EXAMPLES_PER_OPERATION,
            deadline=None,
            suppress_health_check=list(HealthCheck),
            database=None,
        )
        def honours_the_schema(case) -> None:  # noqa: ANN001 - a schemathesis Case
            case.call_and_validate(base_url=base, headers=headers)

        try:
            honours_the_schema()
        except Exception as exc:  # noqa: BLE001 - report every operation's failure at once
            failures.append(f"{operation.label}:\n" + "".join(format_exception(exc))[-3000:])
    assert not failures, "\n\n".join(failures)


def test_static_paths_that_climb_out_are_not_a_server_error(live: tuple[str, str]) -> None:
    base, _ = live
    for path in ("/static/../x", "/static/..%2fsettings.py", "/static/%2e%2e/x"):
        response = requests.get(f"{base}{path}", timeout=10)
        assert response.status_code == 404, (path, response.status_code)
