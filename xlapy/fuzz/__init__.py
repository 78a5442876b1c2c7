"""Reliability tooling: random programs, differential campaigns, test-case reduction.

The compiler is checked the way the most trusted compilers are: thousands of
random programs run through a compiled backend and an oracle (xlapy's
interpreter, or real XLA through JAX), every execution in a sandboxed child
process so hangs and crashes are counted; malformed HLO text thrown at the
parser; failures shrunk to small reproducers. `xlapy fuzz` runs the
campaigns; tests run a slice of each.

- `sandbox`: child processes with timeouts (`Sandbox.run`)
- `compare`: when two results agree (`mismatch`, `assert_matches`)
- `f32_programs`, `hlo_programs`: random HLO modules (f32 only; every dtype, control
  flow, sort/gather/scatter/windows/convolution/map/rng-bit-generator), built from
  `hlo_program_builder` and the steps of `hlo_programs_steps`, `hlo_programs_ops`
  and `hlo_programs_control`
- `jobs`: what a sandboxed worker runs
- `reduce`: shrinking a failing module
"""
