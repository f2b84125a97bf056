"""The reference tool's training leaves (mlpstorage/DLIO, v3.0 timestamped), judged by the training kind wherever they sit."""
