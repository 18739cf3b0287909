"""The catalog (models, accelerators, clouds, fabrics, efficiencies) and its record types, prices, bench results."""
