"""Releases in the admin: read-only. A published release never changes; nothing here can edit or delete one."""

from django.contrib import admin
from django.http import HttpRequest

from exports.models import ExportSettings, Release


class ReadOnlyAdmin(admin.ModelAdmin):
    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False


@admin.register(Release)
class ReleaseAdmin(ReadOnlyAdmin):
    list_display = ["project", "version", "status", "progress_done", "progress_total", "created_at", "finished_at"]
    list_filter = ["status"]
    search_fields = ["project__slug"]


@admin.register(ExportSettings)
class ExportSettingsAdmin(ReadOnlyAdmin):
    list_display = ["project", "license", "version", "updated_at"]
