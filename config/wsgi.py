"""The WSGI application (runserver and any WSGI server import it; manage.py commands, the
Celery workers, the CLI and the hooks do not). Only here does a process serve reads from
the writer's snapshots (`axiom.store.snapshots.serve_reads`): workers import the same
Django project (Celery's Django fixup runs its checks, which import the URLconf) but act
on what they read, so they must always read the live file. It also warms pages and search
in the background."""

import os

from django.core.wsgi import get_wsgi_application

from axiom.store import snapshots

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
application = get_wsgi_application()
snapshots.serve_reads()

from config.stores import warm_in_background  # noqa: E402 - needs Django set up

warm_in_background()
