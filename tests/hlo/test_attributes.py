"""Structured attribute values print as XLA spells them and parse back."""

import pytest

from xlapy.hlo.attributes import (
    AttrKind,
    ConvolutionDimensionNumbers,
    IotaReplicaGroups,
    PaddingConfig,
    PaddingDimension,
    SliceRange,
    Window,
    WindowDimension,
    attribute_kind,
)


@pytest.mark.parametrize("labels", ["b01f_01io->b01f", "bf01_oi01->bf01", "b0f_0io->b0f",
                                    "f01b_i01o->01bf", "b012f_012io->b012f", "bf_io->bf"])
def test_dim_labels_round_trip(labels):
    assert ConvolutionDimensionNumbers.from_text(labels).to_text() == labels


def test_dim_labels_fields():
    d = ConvolutionDimensionNumbers.from_text("b01f_01io->b01f")
    assert (d.input_batch_dimension, d.input_feature_dimension) == (0, 3)
    assert d.input_spatial_dimensions == (1, 2) and d.kernel_spatial_dimensions == (0, 1)
    assert (d.kernel_input_feature_dimension, d.kernel_output_feature_dimension) == (2, 3)


@pytest.mark.parametrize("bad", ["b01f_01io", "b01f_01i->b01f", "b00f_01io->b01f", "bx1f_01io->b01f"])
def test_bad_dim_labels(bad):
    with pytest.raises(ValueError, match="dim_labels"):
        ConvolutionDimensionNumbers.from_text(bad)


def test_window_prints_only_non_defaults():
    w = Window((WindowDimension(3, 2, 1, 1), WindowDimension(3, 2, 0, 1, window_dilation=2)))
    assert w.to_text() == "{size=3x3 stride=2x2 pad=1_1x0_1 rhs_dilate=1x2}"
    assert Window((WindowDimension(2),)).to_text() == "{size=2}"


def test_padding_and_slices():
    p = PaddingConfig((PaddingDimension(0, 0), PaddingDimension(-1, 2, 1)))
    assert p.to_text() == "0_0_0x-1_2_1"  # XLA spells every interior once any is set
    assert PaddingConfig((PaddingDimension(1, 2),)).to_text() == "1_2"
    assert SliceRange(0, 4).to_text() == "[0:4]" and SliceRange(1, 9, 2).to_text() == "[1:9:2]"


def test_iota_replica_groups():
    g = IotaReplicaGroups((2, 2), (4,))
    assert g.groups() == ((0, 1), (2, 3)) and g.to_text() == "[2,2]<=[4]"
    t = IotaReplicaGroups((2, 2), (2, 2), (1, 0))
    assert t.groups() == ((0, 2), (1, 3)) and t.to_text() == "[2,2]<=[2,2]T(1,0)"


def test_attribute_kinds():
    assert attribute_kind("dot", "lhs_contracting_dims") is AttrKind.INT_LIST
    assert attribute_kind("rng-bit-generator", "algorithm") is AttrKind.ENUM
    assert attribute_kind("dot", "algorithm") is AttrKind.RAW
    assert attribute_kind("add", "sharding") is AttrKind.RAW
