from django.apps import AppConfig


class MultichoiceConfig(AppConfig):
    name = "multichoice"
    verbose_name = "Multiple-choice projects"

    def ready(self) -> None:
        from common.jobs import job_type_register
        from multichoice.models import TranslationSuggestionJob

        job_type_register(
            "translation_suggestions",
            model=TranslationSuggestionJob,
            task="multichoice.tasks.translation_suggestions_run",
            stale_setting="JOB_STALE_SECONDS",
        )

        from multichoice import kind

        kind.register()

        from annotation.display import display_sets_register

        display_sets_register(_display_sets)  # its codes' names (annotation/display.py)


def _display_sets() -> dict[str, dict[str, str]]:
    from multichoice.models import Difficulty, ProblemTag, Subset

    return {
        "problem_tag": dict(ProblemTag.choices),
        "subset": dict(Subset.choices),
        "difficulty": dict(Difficulty.choices),
    }
