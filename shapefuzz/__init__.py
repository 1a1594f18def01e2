"""shapefuzz: a property-based differential fuzzer for symbolic shape systems."""

__version__ = "0.1.0"
