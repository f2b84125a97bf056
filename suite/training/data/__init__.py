"""The training kind's dataset: datagen (writes it, resumably, in parallel), dataset (its layout and
seeded record sizes), formats (npz, TFRecord, JPEG, hdf5), parquet and parquet_read (the Parquet
columns, written and read as DLIO's reader does), dlio_data (datasets DLIO's own generator wrote).
Where the bytes go is suite.storage.backend's."""
