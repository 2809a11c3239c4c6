"""config.celery's app with a 3-second visibility timeout, for the redelivery test only.

kombu's Redis transport gives an unacknowledged message back to the queue only once it is
older than `visibility_timeout` (default 3600 s); `unacked_restore_interval` merely sets
how often live workers look. This module lets the test see a redelivery in seconds.
"""

from __future__ import annotations

import config.tasks  # noqa: F401 - registers the tasks on the app
from config.celery import app

app.conf.broker_transport_options = {**app.conf.broker_transport_options, "visibility_timeout": 3}
