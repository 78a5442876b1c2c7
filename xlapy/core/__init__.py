"""The frontend's core: pytrees, dtype promotion, arrays and tracers, and the
one `bind` through which every primitive reaches HLO or runs eagerly."""
