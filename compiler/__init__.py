"""The compiler. `insert_pass` / `InsertedPass` (insert.py): passes a user adds to the stage tables."""

from .insert import InsertedPass, clear_passes, insert_pass, remove_pass

__all__ = ["InsertedPass", "clear_passes", "insert_pass", "remove_pass"]
