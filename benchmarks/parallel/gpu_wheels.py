"""The wheels ``gpu.sh`` installs on a GPU machine that has torch but no Ray, Gymnasium or ALE.

    python benchmarks/parallel/gpu_wheels.py .whl            # then: WHEELS=.whl bash benchmarks/parallel/gpu.sh OUT

Downloads (pip, no dependencies resolved) the packages the project's device machine lacks, for its
Python (``--python-version``, default 3.12) on x86-64 Linux, and repacks Ray's wheel without what a
Ray-core driver never loads (its Java jars, the dashboard's JavaScript, and the libraries: RLlib,
Serve, Data, Tune, Train, LLM): 79 MB -> 40 MB, so the wheels and the working tree fit the machine's
64 MiB transfer. The versions are the ones this checkout's environment runs (Ray is pinned to 2.60 by
the ``[dist]`` extra).
"""

from __future__ import annotations

import argparse
import importlib.metadata
import os
import subprocess
import sys
import zipfile

# what the device image lacks (its list: the tool library's device/KINDS.md): Stride's base and the
# [dist] / [atari] extras' packages, Ray's jsonschema and its own dependencies, MinAtar for a CUDA test
PACKAGES = ("ray", "gymnasium", "farama-notifications", "ale-py", "tensorboardX", "jsonschema",
            "jsonschema-specifications", "referencing", "rpds-py", "minatar")
RAY_DROP = ("ray/jars/", "ray/dashboard/client/build/", "ray/rllib/", "ray/llm/", "ray/serve/", "ray/data/",
            "ray/tune/", "ray/train/")
PLATFORMS = ("manylinux_2_28_x86_64", "manylinux_2_27_x86_64", "manylinux_2_17_x86_64", "manylinux2014_x86_64")


def repack(src: str, dst: str, drop: tuple[str, ...]) -> None:
    """``src`` without the members under ``drop`` (and their RECORD lines), modes kept (Ray's binaries)."""
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w", zipfile.ZIP_DEFLATED) as zout:
        for info in zin.infolist():
            if info.filename.startswith(drop):
                continue
            data = zin.read(info.filename)
            if info.filename.endswith(".dist-info/RECORD"):
                data = b"".join(line for line in data.splitlines(True) if not line.decode().startswith(drop))
            zout.writestr(info, data, compress_type=zipfile.ZIP_DEFLATED)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("dest")
    ap.add_argument("--python-version", default="3.12")
    args = ap.parse_args()
    os.makedirs(args.dest, exist_ok=True)
    pins = [f"{name}=={importlib.metadata.version(name)}" for name in PACKAGES]
    platforms = [arg for p in PLATFORMS for arg in ("--platform", p)]
    subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary=:all:",
                    "--python-version", args.python_version, "--implementation", "cp", *platforms,
                    "-d", args.dest, *pins], check=True)
    for name in os.listdir(args.dest):
        if name.startswith("ray-") and name.endswith(".whl"):
            path = os.path.join(args.dest, name)
            repack(path, path + ".tmp", RAY_DROP)
            os.replace(path + ".tmp", path)
    total = sum(os.path.getsize(os.path.join(args.dest, n)) for n in os.listdir(args.dest))
    print(f"{len(os.listdir(args.dest))} wheels, {total / 2**20:.1f} MiB in {args.dest}")


if __name__ == "__main__":
    main()
