from django.apps import AppConfig


class ReviewConfig(AppConfig):
    name = "review"
    verbose_name = "Review"

    def ready(self) -> None:
        from common import kinds
        from review.next_steps import wikipedia_steps

        kinds.extend("wikipedia_qa", next_steps=wikipedia_steps)  # the Wikipedia QA kind's part that lives here
