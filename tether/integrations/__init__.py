"""tether on other engines and frameworks, each behind its own extra."""
