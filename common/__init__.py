"""The bottom of the app graph: what every app shares and nothing of an app.

Apps import from here; nothing here imports an app (annotation, review, exports, …). Errors services raise
and how the API reports them, API response helpers, pagination, JSON text from outside, spreadsheet-safe
CSV, and the background-job mechanism.
"""
