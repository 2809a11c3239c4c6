"""The WSGI application (runserver and any WSGI server import it; manage.py commands,
the CLI and the hooks do not), which also warms pages and search in the background."""

import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
application = get_wsgi_application()

from config.stores import warm_in_background  # noqa: E402 - needs Django set up

warm_in_background()
