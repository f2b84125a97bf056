"""Everything formatted for humans: terminal text (text.py) and pages (html.py)."""
