"""Trivia items and entity questions move onto the shared QA items, revisions and review slots.

The separate tables are dropped here; 0004 creates the side tables one-to-one with
`annotation.QAItem`. Multiple-choice projects had no production data when this was written.
"""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("multichoice", "0002_entity_questions"),
    ]

    operations = [
        migrations.DeleteModel(name="TriviaReview"),
        migrations.DeleteModel(name="TriviaRevision"),
        migrations.DeleteModel(name="TriviaItem"),
        migrations.DeleteModel(name="EntityQuestion"),
    ]
