"""Datasets for the demo and the examples: MNIST read from its IDX files, or,
offline, scikit-learn's handwritten digits upsampled to MNIST's 28x28."""

from xlapy.datasets.mnist import (
    Dataset,
    DatasetError,
    MissingFileError,
    batches,
    load,
    load_digits_28,
    load_mnist,
    one_hot,
    parse_idx,
    read_idx,
)

__all__ = [
    "Dataset", "DatasetError", "MissingFileError", "batches", "load", "load_digits_28",
    "load_mnist", "one_hot", "parse_idx", "read_idx",
]
