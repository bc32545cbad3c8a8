from django.urls import path

from annotation.views import deleted, projects

urlpatterns = [
    path("", projects.home, name="home"),
    path("projects/new/", projects.project_create, name="project_create"),
    path("deleted-projects/", deleted.deleted_projects, name="deleted_projects"),
    path("deleted-projects/<slug:slug>/restore/", deleted.project_restore, name="project_restore"),
    path("projects/<slug:slug>/", projects.project_detail, name="project_detail"),
    path("projects/<slug:slug>/settings/", projects.project_settings, name="project_settings"),
    path("projects/<slug:slug>/delete/", deleted.project_delete, name="project_delete"),
    path("projects/<slug:slug>/deleted/", deleted.deleted_list, name="deleted_list"),
    path("projects/<slug:slug>/guidelines/", projects.project_guidelines, name="project_guidelines"),
    path("projects/<slug:slug>/pairs/", projects.pair_list, name="pair_list"),
    path("projects/<slug:slug>/items/", projects.item_list, name="item_list"),
    path("projects/<slug:slug>/pairs/<int:pair_id>/delete/", deleted.pair_delete, name="pair_delete"),
    path("projects/<slug:slug>/pairs/<int:pair_id>/restore/", deleted.pair_restore, name="pair_restore"),
    path("projects/<slug:slug>/items/<int:item_id>/restore/", deleted.item_restore, name="item_restore"),
]
