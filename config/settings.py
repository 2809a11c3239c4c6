"""The only Django settings module. Everything is set through environment variables.

Django's ORM holds no Axiom data (DuckDB does, outside the ORM), so no SQL database is
configured here at all.
"""

from __future__ import annotations

import os
from pathlib import Path

from django.core.exceptions import ImproperlyConfigured

from axiom.settings import Settings

BASE_DIR = Path(__file__).resolve().parent.parent

# The web's data dir defaults to the project's `data/` (the CLI's to `./data`); the children
# this process starts inherit it.
os.environ.setdefault("AXIOM_DATA_DIR", str(BASE_DIR / "data"))
AXIOM = Settings.from_env()  # every AXIOM_* variable, parsed (SettingsError on a bad one)

DEBUG = AXIOM.debug
SECRET_KEY = AXIOM.secret_key
ALLOWED_HOSTS = list(AXIOM.allowed_hosts)
# When the site is reachable beyond localhost, every request must carry this token.
AXIOM_AUTH_TOKEN = AXIOM.auth_token
_LOCAL_HOSTS = {"127.0.0.1", "localhost", "::1", "testserver"}
if set(ALLOWED_HOSTS) - _LOCAL_HOSTS and not AXIOM_AUTH_TOKEN:
    raise ImproperlyConfigured(
        "AXIOM_ALLOWED_HOSTS names a non-local host: set AXIOM_AUTH_TOKEN to require authentication"
    )

INSTALLED_APPS = [
    "viewer",  # first: its runserver (Nagle off) replaces the staticfiles app's
    "django.contrib.staticfiles",
    "django_htmx",
    "template_partials",
    "api",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "config.security.SecurityHeadersMiddleware",
    "config.security.ApiJsonErrorsMiddleware",
    "django.middleware.common.CommonMiddleware",
    "config.security.CrossOriginWriteGuard",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    "viewer.middleware.TokenAuthMiddleware",
]

# A 500 is logged with its traceback to stderr (Django logs nothing there when DEBUG is off).
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"stderr": {"class": "logging.StreamHandler"}},
    "loggers": {
        "django.request": {"handlers": ["stderr"], "level": "ERROR", "propagate": False},
        "axiom": {"handlers": ["stderr"], "level": "WARNING", "propagate": True},
    },
}
# Bodies Django will read at all; the API refuses writes over config.security's 1 MB first.
DATA_UPLOAD_MAX_MEMORY_SIZE = 2_500_000

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {"context_processors": ["django.template.context_processors.request"]},
    }
]

DATABASES: dict = {}

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
# Finders that answer 404, not 500, for a path climbing out of static/.
STATICFILES_FINDERS = [
    "config.static_finders.ConfinedFileSystemFinder",
    "config.static_finders.ConfinedAppDirectoriesFinder",
]
USE_TZ = False
TIME_ZONE = "UTC"
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AXIOM_DATA_DIR = AXIOM.data_dir
AXIOM_IMPORT_MAX_MB = AXIOM.import_max_mb

# Celery: Redis (or any Redis-compatible server) is the broker and result backend.
CELERY_BROKER_URL = AXIOM.celery_broker_url
CELERY_RESULT_BACKEND = AXIOM.celery_result_backend
