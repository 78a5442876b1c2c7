"""HLO modules as XLA writes them, shared by the tests that hold xlapy to them."""


def total_order_sort(float_type: str, int_type: str, sign_mask: int, shape: tuple,
                     dimension: int) -> str:
    """XLA's optimised sort of `float_type[shape]` along `dimension`: the comparator
    canonicalises NaN and -0, bitcasts to `int_type` (a `bitcast`, not a
    bitcast-convert) and flips the negatives' bits with `sign_mask` (a total order)."""
    dims = ",".join(map(str, shape))
    layout = ",".join(map(str, reversed(range(len(shape)))))
    return f"""HloModule xla_total_order_sort, is_scheduled=true
%region_0.1 (sort.2: {float_type}[], sort.3: {float_type}[]) -> pred[] {{
  %sort.2 = {float_type}[] parameter(0)
  %sort.3 = {float_type}[] parameter(1)
  %constant.2 = {float_type}[] constant(nan)
  %constant.3 = {float_type}[] constant(0)
  %constant = {int_type}[] constant(0)
  %constant.4 = {int_type}[] constant({sign_mask})
  %ne.2 = pred[] compare(%sort.2, %sort.2), direction=NE
  %ne.3 = pred[] compare(%sort.3, %sort.3), direction=NE
  %eq.2 = pred[] compare(%sort.2, %constant.3), direction=EQ
  %eq.3 = pred[] compare(%sort.3, %constant.3), direction=EQ
  %select_n.4 = {float_type}[] select(%eq.2, %constant.3, %sort.2)
  %select_n.6 = {float_type}[] select(%eq.3, %constant.3, %sort.3)
  %select_n.5 = {float_type}[] select(%ne.2, %constant.2, %select_n.4)
  %select_n.7 = {float_type}[] select(%ne.3, %constant.2, %select_n.6)
  %bitcast = {int_type}[] bitcast(%select_n.5)
  %bitcast.1 = {int_type}[] bitcast(%select_n.7)
  %xor = {int_type}[] xor(%constant.4, %bitcast)
  %compare = pred[] compare(%bitcast, %constant), direction=LT
  %xor.1 = {int_type}[] xor(%constant.4, %bitcast.1)
  %compare.1 = pred[] compare(%bitcast.1, %constant), direction=LT
  %select = {int_type}[] select(%compare, %xor, %bitcast)
  %select.1 = {int_type}[] select(%compare.1, %xor.1, %bitcast.1)
  ROOT %lt_to.1 = pred[] compare(%select, %select.1), direction=LT
}}
ENTRY %main.3 (x.1: {float_type}[{dims}]) -> {float_type}[{dims}] {{
  %x.1 = {float_type}[{dims}]{{{layout}}} parameter(0)
  ROOT %sort.0 = {float_type}[{dims}]{{{layout}}} sort(%x.1), dimensions={{{dimension}}},
    is_stable=true, to_apply=%region_0.1
}}
"""
