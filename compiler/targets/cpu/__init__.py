"""The CPU target: its stage table (table.py) and the passes only it runs."""
