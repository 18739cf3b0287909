"""What fits: training and inference memory, activations, serving capacity."""
