"""What it costs: cloud cost, TCO, rent vs buy."""
