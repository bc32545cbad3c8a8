# ItemEvent moves here from review (annotation.lifecycle records it): the state only, the table
# review_itemevent and its rows stay as they are.

import django.db.models.deletion
import django.utils.timezone
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("annotation", "0017_collections_and_imports_are_jobs"),
        ("review", "0004_item_event_moves_to_annotation"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name="ItemEvent",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID"),
                        ),
                        (
                            "action",
                            models.CharField(
                                choices=[
                                    ("submitted", "Submitted for review"),
                                    ("claimed", "Claimed for review"),
                                    ("reviewed", "Reviewed"),
                                    ("accepted", "Accepted"),
                                    ("needs_rewrite", "Sent back for a rewrite"),
                                    ("rewritten", "Rewritten and resubmitted"),
                                    ("reviewer_rewrite", "Rewritten by a reviewer"),
                                    ("rejected", "Rejected"),
                                    ("verified", "Full-document verification recorded"),
                                ],
                                max_length=24,
                            ),
                        ),
                        ("from_status", models.CharField(blank=True, max_length=16)),
                        ("to_status", models.CharField(blank=True, max_length=16)),
                        ("revision_number", models.PositiveIntegerField(blank=True, null=True)),
                        ("note", models.TextField(blank=True)),
                        ("created_at", models.DateTimeField(default=django.utils.timezone.now)),
                        (
                            "actor",
                            models.ForeignKey(
                                null=True,
                                on_delete=django.db.models.deletion.SET_NULL,
                                related_name="+",
                                to=settings.AUTH_USER_MODEL,
                            ),
                        ),
                        (
                            "item",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="events",
                                to="annotation.qaitem",
                            ),
                        ),
                    ],
                    options={
                        "db_table": "review_itemevent",
                        "ordering": ["item_id", "created_at", "id"],
                        "indexes": [models.Index(fields=["action", "created_at"], name="event_action_idx")],
                    },
                ),
            ],
            database_operations=[],
        ),
    ]
