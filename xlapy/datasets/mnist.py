"""MNIST for the demo: a reader of the IDX files MNIST ships in, the four-file
loader on top of it, and an offline stand-in built from scikit-learn's digits.

The demo trains a softmax regression on [n, 784] float32 images in [0, 1] with
one-hot labels; everything here produces exactly that, whichever source the
data comes from, so the training code never needs to know which one it got.
"""

from __future__ import annotations

import gzip
import struct
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from xlapy.errors import XlapyError


class DatasetError(XlapyError, ValueError):
    """A data file or directory that cannot be used: names the file and what is wrong."""


class MissingFileError(DatasetError, FileNotFoundError):
    """A data file that is not there. Also a FileNotFoundError, so code that
    handles missing files the usual way handles this one too."""


# IDX type codes: the element type, stored big-endian.
_IDX_TYPES = {
    0x08: np.dtype(">u1"),
    0x09: np.dtype(">i1"),
    0x0B: np.dtype(">i2"),
    0x0C: np.dtype(">i4"),
    0x0D: np.dtype(">f4"),
    0x0E: np.dtype(">f8"),
}
_IDX_TYPE_NAMES = "0x08 ubyte, 0x09 byte, 0x0B short, 0x0C int, 0x0D float, 0x0E double"
_GZIP_MAGIC = b"\x1f\x8b"

# The four standard files, as (what, stem); each may be plain or .gz.
_MNIST_FILES = (
    ("train_images", "train-images-idx3-ubyte"),
    ("train_labels", "train-labels-idx1-ubyte"),
    ("test_images", "t10k-images-idx3-ubyte"),
    ("test_labels", "t10k-labels-idx1-ubyte"),
)


def read_idx(path: str | Path) -> np.ndarray:
    """Read one IDX file, gzipped or not, into a native-endian array.

    Gzip is detected by its magic bytes rather than the name, because
    browsers and mirrors often decompress files without renaming them (or
    the other way round).
    """
    path = Path(path)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise MissingFileError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise DatasetError(f"{path}: is a directory, not an IDX file") from None
    if raw[:2] == _GZIP_MAGIC:
        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError, zlib.error) as e:
            raise DatasetError(f"{path}: corrupt gzip stream ({e})") from None
    return parse_idx(raw, source=str(path))


def parse_idx(data: bytes, source: str = "<bytes>") -> np.ndarray:
    """Decode the bytes of an (uncompressed) IDX file; `source` names it in errors.

    Every check is exact: a file that is short or has bytes left over is
    rejected, since either means a bad download rather than a different
    valid reading of the file.
    """
    if len(data) < 4:
        raise DatasetError(
            f"{source}: truncated header: an IDX file starts with a 4-byte magic number, "
            f"found {len(data)} bytes in all")
    magic = struct.unpack(">I", data[:4])[0]
    if data[0] != 0 or data[1] != 0:
        raise DatasetError(
            f"{source}: wrong magic number 0x{magic:08X}: expected 0x0000TTRR (two zero "
            f"bytes, a type code TT, a rank RR), e.g. 0x00000803 for MNIST images and "
            f"0x00000801 for labels; is this an IDX file?")
    code, rank = data[2], data[3]
    if code not in _IDX_TYPES:
        raise DatasetError(
            f"{source}: unknown IDX type code 0x{code:02X} in magic number 0x{magic:08X} "
            f"(known: {_IDX_TYPE_NAMES})")
    header = 4 + 4 * rank
    if len(data) < header:
        raise DatasetError(
            f"{source}: truncated header: rank {rank} needs {header} header bytes "
            f"(4 + 4 per dimension), found {len(data)}")
    shape = struct.unpack(f">{rank}I", data[4:header])
    dtype = _IDX_TYPES[code]
    expected = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    found = len(data) - header
    if found < expected:
        raise DatasetError(
            f"{source}: truncated data: expected {expected} bytes of data for shape "
            f"{shape}, found {found}")
    if found > expected:
        raise DatasetError(
            f"{source}: {found - expected} trailing bytes after the {expected} bytes of "
            f"data for shape {shape}")
    array = np.frombuffer(data, dtype=dtype, offset=header).reshape(shape)
    return array.astype(dtype.newbyteorder("="))


@dataclass(frozen=True, eq=False)
class Dataset:
    """A train/test split ready for the demo's model.

    Images are float32 in [0, 1], one row of rows*cols pixels per example;
    labels are int32 class indices (see `one_hot`). eq=False because arrays
    do not compare to a single bool.
    """

    train_images: np.ndarray
    train_labels: np.ndarray
    test_images: np.ndarray
    test_labels: np.ndarray
    description: str

    def __repr__(self) -> str:
        # The default repr would print four arrays; shapes say what matters.
        return (f"Dataset(train={self.train_images.shape}, test={self.test_images.shape}, "
                f"description={self.description!r})")


def one_hot(labels: np.ndarray, classes: int = 10) -> np.ndarray:
    """[n] class indices -> [n, classes] float32 rows of 0s with a single 1.

    Out-of-range labels are an error: plain fancy indexing would wrap
    negative ones around silently.
    """
    labels = np.asarray(labels)
    if labels.size and (labels.min() < 0 or labels.max() >= classes):
        raise DatasetError(
            f"labels must lie in 0..{classes - 1}, found {labels.min()}..{labels.max()}")
    return np.eye(classes, dtype=np.float32)[labels]


def _expected_names() -> str:
    return ", ".join(f"{stem}[.gz]" for _, stem in _MNIST_FILES)


def _find(data_dir: Path, stem: str) -> Path:
    """The file for `stem` in data_dir: plain or .gz, hyphenated or dotted
    (`train-images.idx3-ubyte`, as some mirrors spell it)."""
    dotted = stem.replace("-idx", ".idx")
    for name in (stem, dotted):
        for suffix in ("", ".gz"):
            if (data_dir / (name + suffix)).is_file():
                return data_dir / (name + suffix)
    present = sorted(p.name for p in data_dir.iterdir())
    shown = ", ".join(present[:10]) + (", ..." if len(present) > 10 else "")
    raise MissingFileError(
        f"{data_dir / stem}: no such file (nor .gz); a MNIST directory holds these four "
        f"files: {_expected_names()}; found: {shown or 'nothing'}")


def _check_pair(images: np.ndarray, labels: np.ndarray, image_path: Path,
                label_path: Path) -> None:
    """The checks that tell a MNIST file from another IDX file or a mixed-up pair."""
    if images.dtype != np.uint8 or images.ndim != 3:
        raise DatasetError(
            f"{image_path}: expected uint8 images of shape (n, rows, cols), "
            f"found {images.dtype} of shape {images.shape}")
    if labels.dtype != np.uint8 or labels.ndim != 1:
        raise DatasetError(
            f"{label_path}: expected uint8 labels of shape (n,), "
            f"found {labels.dtype} of shape {labels.shape}")
    if labels.size and labels.max() > 9:
        raise DatasetError(f"{label_path}: labels must lie in 0..9, found {labels.max()}")
    if len(images) != len(labels):
        raise DatasetError(
            f"{image_path} holds {len(images)} images but {label_path} holds "
            f"{len(labels)} labels")


def _flatten(images: np.ndarray) -> np.ndarray:
    """uint8 [n, rows, cols] -> float32 [n, rows*cols] in [0, 1]."""
    return images.reshape(len(images), -1).astype(np.float32) / np.float32(255)


def load_mnist(data_dir: str | Path) -> Dataset:
    """Load MNIST from a directory holding its four IDX files (plain or gzipped)."""
    data_dir = Path(data_dir)
    if not data_dir.is_dir():
        raise MissingFileError(
            f"{data_dir}: no such directory; expected a directory holding the MNIST files "
            f"{_expected_names()}")
    paths = {what: _find(data_dir, stem) for what, stem in _MNIST_FILES}
    arrays = {what: read_idx(path) for what, path in paths.items()}
    for split in ("train", "test"):
        _check_pair(arrays[f"{split}_images"], arrays[f"{split}_labels"],
                    paths[f"{split}_images"], paths[f"{split}_labels"])
    train, test = arrays["train_images"], arrays["test_images"]
    if train.shape[1:] != test.shape[1:]:
        raise DatasetError(
            f"train images are {train.shape[1]}x{train.shape[2]} but test images are "
            f"{test.shape[1]}x{test.shape[2]} ({paths['train_images']}, "
            f"{paths['test_images']})")
    return Dataset(
        train_images=_flatten(train),
        train_labels=arrays["train_labels"].astype(np.int32),
        test_images=_flatten(test),
        test_labels=arrays["test_labels"].astype(np.int32),
        description=(f"MNIST from {data_dir}: {len(train)} train and {len(test)} test "
                     f"images, {train.shape[1]}x{train.shape[2]}"))


def _linear_resize_matrix(n_in: int, n_out: int) -> np.ndarray:
    """[n_out, n_in] weights of 1-D linear interpolation with the end pixels
    aligned, which is what scipy.ndimage.zoom(order=1) does; applied on both
    axes it upsamples without needing scipy."""
    coords = np.arange(n_out) * (n_in - 1) / (n_out - 1)
    lo = np.minimum(np.floor(coords).astype(int), n_in - 2)
    frac = coords - lo
    weights = np.zeros((n_out, n_in))
    weights[np.arange(n_out), lo] = 1 - frac
    weights[np.arange(n_out), lo + 1] += frac
    return weights


def load_digits_28(test_size: int = 300, seed: int = 0) -> Dataset:
    """The offline fallback: scikit-learn's 1797 real handwritten digits,
    8x8 with values 0..16, upsampled to 28x28 so the model has MNIST's shapes.

    The split is a seeded shuffle, so every run (and every machine) trains
    and tests on the same examples.
    """
    try:
        from sklearn.datasets import load_digits  # optional: scikit-learn's digits, when installed
    except ImportError:
        raise DatasetError(
            "the offline digits need scikit-learn: pip install 'xlapy[demo]', "
            "or pass a directory holding the MNIST files") from None
    digits = load_digits()
    images = digits.images / 16.0                       # [1797, 8, 8] in [0, 1]
    resize = _linear_resize_matrix(8, 28)
    images = np.einsum("ij,njk,lk->nil", resize, images, resize)
    images = np.clip(images, 0.0, 1.0).astype(np.float32).reshape(len(images), -1)
    labels = digits.target.astype(np.int32)
    if not 0 < test_size < len(labels):
        raise ValueError(f"test_size must lie in 1..{len(labels) - 1}, got {test_size}")
    order = np.random.default_rng(seed).permutation(len(labels))
    test, train = order[:test_size], order[test_size:]
    return Dataset(
        train_images=images[train], train_labels=labels[train],
        test_images=images[test], test_labels=labels[test],
        description=(f"scikit-learn's {len(labels)} handwritten digits, 8x8 upsampled to "
                     f"28x28 ({len(train)} train, {len(test)} test)"))


def load(data_dir: str | Path | None = None) -> Dataset:
    """MNIST from `data_dir` when given, else the offline digits."""
    return load_digits_28() if data_dir is None else load_mnist(data_dir)


def batches(dataset: Dataset, batch_size: int, steps: int,
            seed: int = 0) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """`steps` minibatches (float32 images, float32 one-hot labels) from the train split.

    Examples are drawn epoch by epoch from seeded shuffles, so each one is
    seen once per epoch and a given seed always gives the same batches.
    Arguments are checked now, not at the first next().
    """
    if batch_size < 1:
        raise ValueError(f"batch_size must be positive, got {batch_size}")
    if steps < 0:
        raise ValueError(f"steps must be non-negative, got {steps}")
    if len(dataset.train_labels) == 0:
        raise DatasetError(f"the train split of {dataset.description!r} is empty")
    return _batches(dataset, batch_size, steps, np.random.default_rng(seed))


def _batches(dataset: Dataset, batch_size: int, steps: int,
             rng: np.random.Generator) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    n = len(dataset.train_labels)
    order = np.empty(0, dtype=np.int64)
    for _ in range(steps):
        while len(order) < batch_size:
            order = np.concatenate([order, rng.permutation(n)])
        index, order = order[:batch_size], order[batch_size:]
        yield (dataset.train_images[index].astype(np.float32, copy=False),
               one_hot(dataset.train_labels[index]))
