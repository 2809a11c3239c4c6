from __future__ import annotations

from django.urls import path

from viewer import (
    views,
    views_builds,
    views_conflicts,
    views_decisions,
    views_entries,
    views_forget,
    views_import,
    views_search,
    views_task_actions,
    views_tasks,
)

urlpatterns = [
    path("", views.dashboard, name="viewer-dashboard"),
    path("login", views.login, name="viewer-login"),
    path("import/claude", views_import.import_claude, name="viewer-import-claude"),
    path("import/", views_import.import_page, name="viewer-import"),
    path("import/<str:task_id>/", views_import.import_status, name="viewer-import-status"),
    path("sessions/", views.session_list, name="viewer-sessions"),
    path("sessions/<path:session_id>/", views.session_detail, name="viewer-session"),
    path("entries/", views_entries.entry_list, name="viewer-entries"),
    path("entries/<str:entry_id>/", views_entries.entry_detail, name="viewer-entry"),
    path(
        "entries/<str:entry_id>/approve",
        views_entries.entry_approve,
        name="viewer-entry-approve",
    ),
    path("c/<str:citation_id>/", views_entries.citation_detail, name="viewer-citation"),
    path("search/", views_search.search, name="viewer-search"),
    path("tasks/", views_tasks.task_list, name="viewer-tasks"),
    path("tasks/blocked/", views_tasks.blocked_tasks, name="viewer-tasks-blocked"),
    path("tasks/graph/", views_tasks.task_graph, name="viewer-tasks-graph"),
    path("tasks/<str:task_id>/", views_tasks.task_detail, name="viewer-task"),
    path("tasks/<str:task_id>/act", views_task_actions.task_act, name="viewer-task-act"),
    path(
        "tasks/<str:task_id>/blockers",
        views_task_actions.task_link_blocker,
        name="viewer-task-link-blocker",
    ),
    path("forget/", views_forget.forget_page, name="viewer-forget"),
    path("conflicts/", views_conflicts.conflict_list, name="viewer-conflicts"),
    path("conflicts/<str:conflict_id>/", views_conflicts.conflict_detail, name="viewer-conflict"),
    path(
        "conflicts/<str:conflict_id>/resolve",
        views_conflicts.conflict_resolve,
        name="viewer-conflict-resolve",
    ),
    path("decisions/", views_decisions.decision_list, name="viewer-decisions"),
    path("builds/", views_builds.build_list, name="viewer-builds"),
]
