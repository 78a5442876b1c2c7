"""HLO: the IR, XLA's text format both ways, shape inference, the verifier
and a builder."""

from xlapy.errors import BuilderError, ParseError, ShapeError, VerifierError
from xlapy.hlo.attributes import (
    ComparisonDirection,
    ComparisonType,
    ConvolutionDimensionNumbers,
    FftType,
    FusionKind,
    OpMetadata,
    PaddingConfig,
    PaddingDimension,
    Precision,
    RandomDistribution,
    RawAttribute,
    RngAlgorithm,
    SliceRange,
    TriangularSolveTranspose,
    Window,
    WindowDimension,
)
from xlapy.hlo.dtypes import PrimitiveType
from xlapy.hlo.ir import HloComputation, HloInstruction, HloModule
from xlapy.hlo.opcode import Opcode
from xlapy.hlo.shape import Layout, Shape

from xlapy.hlo.builder import ComputationBuilder, ModuleBuilder  # noqa: E402  isort: skip
from xlapy.hlo.parser import parse_module
from xlapy.hlo.verifier import verify as _verify


def parse(text: str | bytes) -> HloModule:
    """Parse XLA's HLO text (short or long form) into a module; ParseError if malformed.

    `text` may be bytes (a file read in binary): anything that is not UTF-8 is a
    ParseError at its line and column. The parser does not verify; `verify` does,
    and its errors name the line and column where the culprit was defined."""
    return parse_module(text)


def verify(module: HloModule) -> None:
    """Check every instruction's shape and contract; VerifierError names the culprit."""
    _verify(module)


__all__ = [
    "BuilderError", "ComputationBuilder", "ModuleBuilder",
    "ComparisonDirection", "ComparisonType", "ConvolutionDimensionNumbers", "FftType",
    "FusionKind", "HloComputation", "HloInstruction", "HloModule", "Layout", "OpMetadata",
    "Opcode", "PaddingConfig", "PaddingDimension", "ParseError", "Precision", "PrimitiveType",
    "RandomDistribution", "RawAttribute", "RngAlgorithm", "Shape", "ShapeError", "SliceRange",
    "TriangularSolveTranspose", "VerifierError", "Window", "WindowDimension", "parse", "verify",
]
