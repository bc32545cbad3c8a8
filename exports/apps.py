from django.apps import AppConfig


class ExportsConfig(AppConfig):
    name = "exports"
    verbose_name = "Exports"

    def ready(self) -> None:
        """This app's background jobs (common/jobs.py) and its part of the project kinds (common/kinds.py)."""
        from common.jobs import job_type_register
        from exports.models import Release

        job_type_register(
            "release", model=Release, task="exports.tasks.release_build_task", stale_setting="RELEASE_STALE_SECONDS"
        )

        from common import kinds
        from exports.formats import wikipedia_release_writers
        from exports.records import wikipedia_release_units

        # The Wikipedia QA kind's writers and the groups its releases split (page pairs).
        kinds.extend("wikipedia_qa", release_writers=wikipedia_release_writers, release_units=wikipedia_release_units)

        from annotation.display import display_sets_register

        display_sets_register(_display_sets)  # its codes' names (annotation/display.py)


def _display_sets() -> dict[str, dict[str, str]]:
    from exports.models import Release

    return {"release_status": dict(Release.Status.choices)}
