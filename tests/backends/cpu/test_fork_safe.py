"""A child forked while another thread holds the compiler's lock still compiles."""

import subprocess
import sys
import textwrap

SCRIPT = textwrap.dedent("""
    import os, threading, time
    import numpy as np
    import xlapy
    from xlapy.backends.cpu import llvm_target, runtime_library

    held = threading.Event()
    def hold():
        with llvm_target._LOCK, runtime_library._LOCK:
            held.set()
            time.sleep(3)
    threading.Thread(target=hold, daemon=True).start()
    held.wait()
    pid = os.fork()
    if pid == 0:
        f = xlapy.jit(lambda x: x * 2 + 1)
        ok = np.array_equal(f(np.arange(4.0)), np.arange(4.0) * 2 + 1)
        os._exit(0 if ok else 3)
    _, status = os.waitpid(pid, 0)
    print("child", os.waitstatus_to_exitcode(status))
""")


def test_a_child_forked_during_a_compilation_compiles():
    done = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True,
                          timeout=60, env={"XLAPY_FLAGS": "--xlapy_cpu_cache_dir=off",
                                            "PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr
    assert "child 0" in done.stdout, done.stdout + done.stderr
