"""Our own `suite run` results dirs as a layout plugin (layout): numbered runs (R/run-<k>/), timestamped
leaves (R/<kind>/<model>/{run,datagen,datasize}/<ts>/), TPCx-AI runs, several kinds in one results dir;
and the walk of any tree into its results by owner (nodes)."""
