"""Full screens and modals of the app (review, confirms, approvals, notes, backups, help).

Kept import-light: import each screen from its own module.
"""
