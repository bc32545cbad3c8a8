from django.apps import AppConfig


class ValidationConfig(AppConfig):
    name = "validation"
    verbose_name = "Validation"

    def ready(self) -> None:
        from validation import kind

        kind.register()
