"""The harness's malloc tuning: freed arrays of a few MB stay mapped for the next repetition."""

import subprocess
import sys

import pytest

CHURN = r'''
import resource, sys
import numpy as np
if sys.argv[1] == "tune":
    from toolkit.evaluation.allocator import tune_allocator
    print(tune_allocator())
else:
    print(None)
def one_round():
    parts = [np.ones(15 << 17) for _ in range(3)]  # three 15 MB arrays, written, then freed
    return sum(float(p[-1]) for p in parts)
one_round()
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for _ in range(10):
    one_round()
print((resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before) / 10)
'''


def _faults_per_round(mode: str, env_extra: dict[str, str] | None = None) -> tuple[str, float]:
    import os

    env = {k: v for k, v in os.environ.items() if not (k.startswith("MALLOC_") and k.endswith("_"))}
    env.pop("TOOLKIT_MALLOC", None)
    env.update(env_extra or {})
    out = subprocess.run([sys.executable, "-c", CHURN, mode], capture_output=True, text=True, env=env,
                         check=True, timeout=120).stdout.split()
    return out[0], float(out[1])


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's mallopt: Linux only")
def test_tuned_allocator_keeps_freed_arrays_mapped():
    flag, default = _faults_per_round("plain")
    assert default > 500, f"the untuned allocator should fault the 45 MB back in each round ({default} faults)"
    flag, tuned = _faults_per_round("tune")
    if flag != "True":
        pytest.skip("not glibc: the allocator is left as it is")
    assert tuned < default / 20, (tuned, default)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's mallopt: Linux only")
@pytest.mark.parametrize("env", [{"TOOLKIT_MALLOC": "default"}, {"MALLOC_ARENA_MAX_": "2"}])
def test_allocator_left_alone_when_the_user_says_so(env):
    flag, faults = _faults_per_round("tune", env)
    assert flag == "False"
    assert faults > 500
