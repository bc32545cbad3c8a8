from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("annotation", "0005_soft_delete_projects_pairs_items"),
    ]

    operations = [
        migrations.AlterField(
            model_name="project",
            name="kind",
            field=models.CharField(
                choices=[
                    ("wikipedia_qa", "Local-variety Wikipedia QA"),
                    ("validation", "Validation of collected QA pairs"),
                    ("trivia", "Multiple-choice trivia, local vs global, in two languages"),
                    ("entity_qa", "Entity questions with controlled context"),
                ],
                default="wikipedia_qa",
                max_length=32,
            ),
        ),
        migrations.AlterField(
            model_name="qaitemrevision",
            name="reason",
            field=models.CharField(
                choices=[
                    ("submitted", "Submitted by the author"),
                    ("rewrite", "Rewritten by the author after review"),
                    ("reviewer_rewrite", "Rewritten by a reviewer"),
                    ("coordinator_fix", "Corrected by a coordinator"),
                    ("imported", "Imported"),
                    ("generated", "Generated (entity questions)"),
                ],
                default="submitted",
                max_length=24,
            ),
        ),
        migrations.AddField(
            model_name="qaitemrevision",
            name="content",
            field=models.JSONField(blank=True, default=dict),
        ),
    ]
