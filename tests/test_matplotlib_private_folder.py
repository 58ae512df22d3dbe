"""matplotlib's config folder, where it keeps the font cache it trusts (which file each
font family is drawn from), is this user's private folder whatever MPLCONFIGDIR says:
with MPLCONFIGDIR in another user's folder she could rewrite the cache, and root's report
was drawn with her font and `verify --redraw-figures` failed an untouched set. An unsafe
private folder is refused in one line, exit 2."""

import json
import subprocess
import sys

from cli_runs import one_line

DRAW = ("from sacscale.pyplot import pyplot; plt = pyplot(); import matplotlib; "
        "plt.figure().savefig(__import__('io').BytesIO()); print(matplotlib.get_configdir())")

def test_the_font_cache_goes_to_our_private_folder_not_mpl_config_dir(tmp_path):
    given, locks = tmp_path / "theirs", tmp_path / "locks"
    given.mkdir()
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "PYTHONPATH": ":".join(sys.path),
           "MPLCONFIGDIR": str(given), "SACSCALE_LOCK_DIR": str(locks)}
    done = subprocess.run([sys.executable, "-c", DRAW], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == str(locks / "matplotlib")
    assert list(given.iterdir()) == []  # nothing read or written in the folder named
    cache = next((locks / "matplotlib").glob("fontlist-*.json"))
    assert json.loads(cache.read_text())["ttflist"]
    assert (locks / "matplotlib").stat().st_mode & 0o777 == 0o700

def test_an_unsafe_private_folder_is_refused_in_one_line(tmp_path):
    locks = tmp_path / "locks"
    locks.mkdir()
    locks.chmod(0o777)
    out = tmp_path / "out"
    done = subprocess.run([sys.executable, "-m", "sacscale.cli", "report", "--summary", "s.json", "--metrics",
                           "m.json", "--output-md", out / "r.md", "--output-html", out / "r.html", "--figures-dir",
                           out / "figures"], capture_output=True, text=True, timeout=120,
                          env={"PATH": "/usr/bin:/bin", "PYTHONPATH": ":".join(sys.path),
                               "SACSCALE_LOCK_DIR": str(locks)})
    one_line(done, "matplotlib's font cache (MPLCONFIGDIR) goes into this user's private folder, which cannot "
             f"be used: lock folder {locks} is writable by other users (mode 0777)")
    assert not out.exists()
