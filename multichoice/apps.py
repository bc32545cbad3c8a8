from django.apps import AppConfig


class MultichoiceConfig(AppConfig):
    name = "multichoice"
    verbose_name = "Multiple-choice projects"

    def ready(self) -> None:
        from multichoice import kind

        kind.register()
