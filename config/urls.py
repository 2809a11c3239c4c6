from django.urls import include, path

from api.api import api

urlpatterns = [
    path("api/", api.urls),
    path("", include("viewer.urls")),
]
