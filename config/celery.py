"""The Celery app: queues, routing and the beat schedule.

Two queues. `default` takes ingest work and may run with any concurrency. `writer` applies
projections and drains the vector outbox, and must be consumed by exactly one worker
process with concurrency 1, so LanceDB only ever has one writer.
"""

from __future__ import annotations

from celery import Celery
from kombu import Queue
from kombu.exceptions import OperationalError
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from axiom.settings import Settings

_SETTINGS = Settings.from_env()
BROKER_URL = _SETTINGS.celery_broker_url
PROJECT_EVERY_SECONDS = _SETTINGS.project_every_seconds
DRAIN_EVERY_SECONDS = _SETTINGS.drain_every_seconds
RECONCILE_EVERY_SECONDS = _SETTINGS.reconcile_every_seconds
DEMOTE_EVERY_SECONDS = 24 * 60 * 60  # half-lives are counted in days
SPOOL_EVERY_SECONDS = 60  # a spooled hook payload waits at most this long under `up`
# What sending a task (kombu) or reading/storing a result (redis) raises while the broker,
# which is also the result backend, does not answer.
BROKER_DOWN: tuple[type[Exception], ...] = (OperationalError, RedisConnectionError, RedisTimeoutError)  # fmt: skip

app = Celery("axiom", broker=BROKER_URL, backend=_SETTINGS.celery_result_backend)
app.conf.update(
    task_queues=[Queue("default"), Queue("writer")],
    task_default_queue="default",
    task_routes={
        "axiom.project": {"queue": "writer"},
        "axiom.drain_outbox": {"queue": "writer"},
        "axiom.reconcile_outbox": {"queue": "writer"},
        "axiom.demote_entries": {"queue": "writer"},
    },
    task_acks_late=True,  # a worker killed mid-task gets the task redelivered
    task_reject_on_worker_lost=True,
    worker_prefetch_multiplier=1,
    broker_connection_retry_on_startup=True,
    # The broker may stop and come back (`axiom up` restarts it): workers and beat keep
    # trying to reconnect, logging each attempt, rather than exit after 100 (~45 min).
    broker_connection_max_retries=None,
    # A task running when the broker goes away finishes its work: its message died with the
    # broker (nothing kept on disk), so cancelling it would only throw the work away.
    worker_cancel_long_running_tasks_on_connection_loss=False,
    # Redis hands a dead worker's unacknowledged task back once it is older than
    # visibility_timeout (default 1 h). Tasks are idempotent, so 5 min is safe: a task that
    # outlives it only runs twice with no new effect.
    broker_transport_options={
        "visibility_timeout": 300,
        "unacked_restore_interval": 1,
        "unacked_restore_throttle": 1,
    },
    task_serializer="json",
    result_serializer="json",
    accept_content=["json"],
    result_expires=3600,
    beat_schedule={
        # A tick that waited behind a long drain is dropped, not run late: the next comes soon
        # (a projection applies every event since its offset, so no tick carries its own).
        "project-new-events": {
            "task": "axiom.project",
            "schedule": PROJECT_EVERY_SECONDS,
            "options": {"expires": PROJECT_EVERY_SECONDS},
        },
        "drain-vector-outbox": {
            "task": "axiom.drain_outbox",
            "schedule": DRAIN_EVERY_SECONDS,
            "options": {"expires": DRAIN_EVERY_SECONDS},
        },
        "reconcile-vector-outbox": {
            "task": "axiom.reconcile_outbox",
            "schedule": RECONCILE_EVERY_SECONDS,
            "options": {"expires": RECONCILE_EVERY_SECONDS},
        },
        "demote-aged-entries": {"task": "axiom.demote_entries", "schedule": DEMOTE_EVERY_SECONDS},
        # Hook payloads spooled by a hook that missed its budget, or whose task was lost.
        "import-spooled-hooks": {
            "task": "axiom.import_spooled_hooks",
            "schedule": SPOOL_EVERY_SECONDS,
            "options": {"expires": SPOOL_EVERY_SECONDS},
        },
    },
    imports=["config.tasks"],
)
