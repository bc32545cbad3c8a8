"""Shared bits of localqa's management commands (the leading underscore keeps Django from listing it)."""

from annotation.models import Project

DEV_SERVER = "http://127.0.0.1:8000"  # where `manage.py runserver` listens by default


def project_url(project: Project) -> str:
    return f"{DEV_SERVER}{project.get_absolute_url()}"
