"""The audit log in the admin: read-only; a log that can be edited proves nothing."""

from django.contrib import admin
from django.http import HttpRequest

from audit.models import AuditEvent


@admin.register(AuditEvent)
class AuditEventAdmin(admin.ModelAdmin):
    list_display = ["created_at", "project", "actor", "action", "object_type", "object_id", "object_label"]
    list_filter = ["action", "object_type"]
    search_fields = ["object_label", "actor__username", "project__slug"]
    list_select_related = ["project", "actor"]
    date_hierarchy = "created_at"

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False
