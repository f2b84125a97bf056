"""Where datasets and checkpoints live: the storage backend seam.

base.py is the interface (Backend, ReadHandle, Writer, Entry), posix.py the POSIX implementation
(every O_DIRECT, preadv, statvfs, fallocate, syncfs, listing and rename-on-complete of dataset and
checkpoint files), select.py picks one from a workload's storage.storage_type. No logic here.
"""
