"""The version of fastboost (one place: the package, model files and the command line read it)."""
__version__ = "0.1.0"
