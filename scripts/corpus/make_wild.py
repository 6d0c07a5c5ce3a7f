#!/usr/bin/env python3
"""Makes the public trace corpus that testdata/wild/MANIFEST.json lists, from local git copies of
the repositories it names (nothing is downloaded: clone them first, at least to the listed commit).

For each trace: `git show COMMIT:PATH` from the repository, then shrink_trace.py with the options the
manifest records, into OUT/<file>. The corpus test reads OUT from $GPUDOCTOR_WILD_DIR or from
../shared/wild beside the checkout.

Usage:
  make_wild.py OUT --repos DIR              # DIR/<owner>/<name> is a clone (bare or not)
  make_wild.py OUT --git-dir-pattern 'PATTERN'  # PATTERN with {owner} and {name}, a git dir
"""
import argparse
import io
import json
import os
import shlex
import subprocess
import sys
import tarfile
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def git_dir(repo, args):
    owner, name = repo.split("/")
    if args.git_dir_pattern:
        return args.git_dir_pattern.format(owner=owner, name=name)
    path = os.path.join(args.repos, owner, name)
    return path if path.endswith(".git") or not os.path.isdir(os.path.join(path, ".git")) else os.path.join(path, ".git")


def make(entry, args):
    blob = subprocess.run(["git", "--git-dir", git_dir(entry["repo"], args), "show", f'{entry["commit"]}:{entry["path"]}'],
                          check=True, capture_output=True).stdout
    if entry.get("member"):  # one file of a tar archive at that path (a multi-rank set)
        with tarfile.open(fileobj=io.BytesIO(blob)) as tar:
            blob = tar.extractfile(entry["member"]).read()
    name = entry.get("member") or entry["path"]
    suffix = ".json.gz" if name.endswith(".gz") else ".json"
    with tempfile.NamedTemporaryFile(suffix=suffix, delete=False) as raw:
        raw.write(blob)
    try:
        cmd = shlex.split(entry["shrunk"])  # "scripts/corpus/shrink_trace.py --steps 1 ..."
        out = os.path.join(args.out, entry["file"])
        os.makedirs(os.path.dirname(out), exist_ok=True)
        subprocess.run([sys.executable, os.path.join(ROOT, cmd[0]), raw.name, out] + cmd[1:], check=True)
    finally:
        os.unlink(raw.name)
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("out")
    g = p.add_mutually_exclusive_group(required=True)
    g.add_argument("--repos", help="folder of clones: DIR/<owner>/<name>")
    g.add_argument("--git-dir-pattern", help="git dir of each repository, with {owner} and {name}")
    p.add_argument("--manifest", default=os.path.join(ROOT, "testdata", "wild", "MANIFEST.json"))
    args = p.parse_args()
    os.makedirs(args.out, exist_ok=True)
    with open(args.manifest) as f:
        traces = json.load(f)["traces"]
    for t in traces:
        print(f'{t["id"]}: {make(t, args)}')


if __name__ == "__main__":
    main()
