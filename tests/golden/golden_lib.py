# SPDX-License-Identifier: MIT
"""golden_lib.py: what the Python generators share (imported by them)."""
import os
import subprocess


def installed(package):
    """Whether the Debian package is installed."""
    r = subprocess.run(["dpkg-query", "-W", "-f=${Status}", package],
                       capture_output=True, text=True)
    return r.returncode == 0 and "install ok installed" in r.stdout


def package_version(package):
    """The installed version of a Debian package, or "unknown"."""
    r = subprocess.run(["dpkg-query", "-W", "-f=${Version}", package],
                       capture_output=True, text=True)
    return r.stdout.strip() or "unknown"


def ensure_packages(*packages):
    """Installs the Debian packages that are missing (apt-get update once if needed)."""
    missing = [p for p in packages if not installed(p)]
    if not missing:
        return
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    cmd = ["apt-get", "install", "-y", "--no-install-recommends"] + missing
    if subprocess.run(cmd, env=env).returncode != 0:
        subprocess.run(["apt-get", "update"], env=env, check=True)
        subprocess.run(cmd, env=env, check=True)
