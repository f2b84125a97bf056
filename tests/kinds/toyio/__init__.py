"""toyio: a throwaway benchmark kind that lives in one folder (tests/kinds/test_throwaway_kind.py copies it
into a copy of suite/ as suite/toyio/ and adds its one registry line). It writes a few files, reads them back
after dropping them from the page cache, and keeps every read's timing as its evidence."""
