"""`manage.py runserver` (what `axiom up` serves with) with Nagle's algorithm off on every
connection. Django's server writes a response's headers and body in separate sends; on a
kept-alive connection Nagle held the body back until the client acknowledged the headers,
and a client delays that acknowledgement (up to 40 ms on Linux), so every page and API
call after a connection's first waited for it (README, "Session 20")."""

from __future__ import annotations

import contextlib
import socket

from django.contrib.staticfiles.management.commands.runserver import Command as StaticRunserver
from django.core.servers.basehttp import WSGIServer


class NoDelayWSGIServer(WSGIServer):
    """Django's development server, sending each write at once."""

    def get_request(self) -> tuple[socket.socket, object]:
        conn, address = super().get_request()
        with contextlib.suppress(OSError):  # the client is gone: its request fails as ever
            conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return conn, address


class Command(StaticRunserver):
    server_cls = NoDelayWSGIServer
