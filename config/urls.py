from api.api import api
from django.urls import include, path

urlpatterns = [
    path("api/", api.urls),
    path("", include("viewer.urls")),
]
