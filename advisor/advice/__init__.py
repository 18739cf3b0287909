"""What to choose: accelerator ranking, client workload profiles."""
