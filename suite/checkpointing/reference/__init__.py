"""The reference tool's checkpointing leaves (mlpstorage/DLIO, v3.0 timestamped), judged by the checkpointing kind wherever they sit."""
