from django.apps import AppConfig


class ValidationConfig(AppConfig):
    name = "validation"
    verbose_name = "Validation"

    def ready(self) -> None:
        from common.jobs import job_type_register
        from validation.models import ModelJob, SearchCollection

        job_type_register(
            "search",
            model=SearchCollection,
            task="validation.tasks.search_collection_run",
            stale_setting="JOB_STALE_SECONDS",
        )
        job_type_register(
            "model_job", model=ModelJob, task="validation.tasks.model_job_run", stale_setting="JOB_STALE_SECONDS"
        )

        from common.secrets import secret_rotator_register
        from validation.search import search_keys_rotate

        secret_rotator_register("project search keys", search_keys_rotate)

        from validation import kind

        kind.register()

        from annotation.display import display_sets_register

        display_sets_register(_display_sets)  # its codes' names (annotation/display.py)


def _display_sets() -> dict[str, dict[str, str]]:
    from validation.models import QUESTION_BAD_REASONS, DomainLabel, Task

    return {
        "domain": dict(DomainLabel.choices),
        "task": dict(Task.choices),
        "question_reason": dict(QUESTION_BAD_REASONS),
    }
