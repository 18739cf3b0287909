"""How long it takes: kernel timing, training steps, serving, clusters, parallel layouts, networks, efficiencies, the time model's accuracy."""
