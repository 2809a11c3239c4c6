"""A static file finder that answers "not found" for a path climbing out of `static/`.

Django's `FileSystemFinder` and `AppDirectoriesFinder` raise `SuspiciousFileOperation` for `/static/..%2fsettings.py`;
the static files handler of `runserver` catches only `Http404`, so that request became a
500 with a traceback. Refusing such a path as "no such file" makes it a 404.
"""

from __future__ import annotations

from typing import Any

from django.contrib.staticfiles.finders import AppDirectoriesFinder, FileSystemFinder
from django.core.exceptions import SuspiciousFileOperation


class ConfinedFileSystemFinder(FileSystemFinder):
    def find_location(self, root: str, path: str, prefix: str | None = None) -> Any:
        try:
            return super().find_location(root, path, prefix)
        except SuspiciousFileOperation:
            return None


class ConfinedAppDirectoriesFinder(AppDirectoriesFinder):
    def find_in_app(self, app: str, path: str) -> Any:
        try:
            return super().find_in_app(app, path)
        except SuspiciousFileOperation:
            return None
