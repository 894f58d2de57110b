"""Ray workers import the searchkit the driver runs, never a `searchkit/` tree of the folder the
driver was started from (issue 39 item 1): ``ray.init`` puts the driver's current folder first on
every worker's ``sys.path``, so ``RayEngine.start`` starts Ray from the folder of the installed
package. A local cluster (num_cpus=1) in a child process, bound to 127.0.0.1, stopped by the script."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

DRIVER = """\
import os, sys
import ray
from searchkit.scale.ray_engine import RayEngine
here = os.getcwd()
engine = RayEngine(num_cpus=1).start()
try:
    @ray.remote(num_cpus=1)
    def where():
        import searchkit
        return searchkit.__file__
    print("WORKER", ray.get(where.remote(), timeout=300))
    print("CWD", os.getcwd() == here)
finally:
    engine.stop()
"""


@pytest.mark.ray
def test_ray_workers_never_import_a_searchkit_tree_of_the_driver_s_current_folder(tmp_path):
    pytest.importorskip("ray")
    marker = tmp_path / "planted-ran"
    planted = tmp_path / "planted"
    (planted / "searchkit").mkdir(parents=True)
    (planted / "searchkit" / "__init__.py").write_text(f"open({str(marker)!r}, 'w').write('ran')\n", encoding="utf-8")
    env = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0"}
    # -I: the driver itself does not import the planted tree (what `searchkit` the console script does)
    run = subprocess.run([sys.executable, "-I", "-c", DRIVER], cwd=planted, env=env, capture_output=True, text=True,
                         timeout=540, stdin=subprocess.DEVNULL)
    assert run.returncode == 0, run.stderr[-3000:]
    out = dict(line.split(" ", 1) for line in run.stdout.splitlines() if line.startswith(("WORKER ", "CWD ")))
    assert not marker.exists()
    assert Path(out["WORKER"]).resolve() == (ROOT / "searchkit" / "__init__.py").resolve()
    assert out["CWD"] == "True"  # the driver's current folder is its own again
