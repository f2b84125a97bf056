"""MLPerf Storage training (unet3d, resnet50, cosmoflow, bert, retinanet, flux, dlrm): its kind,
its workloads (the Workload model), its dataset (data/), the runner (run/), the checker (check/),
the reference tool's leaves (reference/), the sweep (sweep/), its figures and pages, its schemas."""
