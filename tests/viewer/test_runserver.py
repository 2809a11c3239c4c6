"""`manage.py runserver`, what `axiom up` serves with, is the viewer's: each accepted
connection has Nagle's algorithm off, so a kept-alive connection's responses are not held
back for the client's delayed acknowledgement."""

from __future__ import annotations

import socket

from django.core.management import get_commands

from viewer.management.commands.runserver import Command, NoDelayWSGIServer


def test_runserver_is_the_viewers_command() -> None:
    assert get_commands()["runserver"] == "viewer"
    assert Command.server_cls is NoDelayWSGIServer


def test_an_accepted_connection_sends_without_delay() -> None:
    server = NoDelayWSGIServer(("127.0.0.1", 0), object)
    try:
        with socket.create_connection(server.server_address, timeout=5) as client:
            conn, _ = server.get_request()
            try:
                assert conn.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) == 1
                assert client.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) == 0
            finally:
                conn.close()
    finally:
        server.server_close()
