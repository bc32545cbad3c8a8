from django.apps import AppConfig


class ArchiveConfig(AppConfig):
    name = "archive"
    verbose_name = "Project archives"

    def ready(self) -> None:
        """This app's background jobs, for the worker's start and the requeue (common/jobs.py)."""
        from archive.models import ProjectArchive
        from common.jobs import job_type_register

        for kind in ProjectArchive.Kind:
            job_type_register(
                f"archive_{kind}",
                model=ProjectArchive,
                task=f"archive.tasks.archive_{kind}_task",
                stale_setting="ARCHIVE_STALE_SECONDS",
                kind=kind,
            )
