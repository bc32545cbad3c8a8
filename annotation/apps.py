from django.apps import AppConfig


class AnnotationConfig(AppConfig):
    name = "annotation"
    verbose_name = "Annotation"

    def ready(self) -> None:
        """This app's background jobs (common/jobs.py) and its part of the project kinds (common/kinds.py)."""
        from annotation.models import ImportJob
        from common.jobs import job_type_register

        job_type_register(
            "import", model=ImportJob, task="annotation.tasks.import_job_run", stale_setting="JOB_STALE_SECONDS"
        )

        from annotation import kind

        kind.register()
