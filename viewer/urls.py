from __future__ import annotations

from django.urls import path

from viewer import views

urlpatterns = [
    path("", views.dashboard, name="viewer-dashboard"),
    path("login", views.login, name="viewer-login"),
    path("sessions/", views.session_list, name="viewer-sessions"),
    path("sessions/<path:session_id>/", views.session_detail, name="viewer-session"),
]
