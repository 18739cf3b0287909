"""The ground: errors, units, number format, choice lists, plausible ranges, markup, capped file and YAML reading."""
