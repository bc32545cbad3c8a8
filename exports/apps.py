from django.apps import AppConfig


class ExportsConfig(AppConfig):
    name = "exports"
    verbose_name = "Exports"

    def ready(self) -> None:
        """This app's background jobs, for the worker's start and the requeue (common/jobs.py)."""
        from common.jobs import job_type_register
        from exports.models import Release

        job_type_register(
            "release", model=Release, task="exports.tasks.release_build_task", stale_setting="RELEASE_STALE_SECONDS"
        )
