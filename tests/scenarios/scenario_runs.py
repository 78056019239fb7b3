"""What the tests of scenarios/*.py share: a run directory as
scenarios/run.sh writes it (RUN/cases.txt, RUN/<case>/report.json), a
script run on it, and its tab-separated rows read back."""
import json
import os
import subprocess
import sys


def write_run(root, cases):
    """cases: id -> (present nodes, absent nodes, the report's root node).
    Writes RUN/cases.txt with those labels and each case's report.json."""
    os.makedirs(root)
    with open(os.path.join(root, "cases.txt"), "w") as f:
        f.write("# id | title | flags | present | absent\n")
        for case, (present, absent, report_root) in cases.items():
            f.write(f"{case} | t | f | {' '.join(present) or '-'} | {' '.join(absent) or '-'}\n")
            os.makedirs(os.path.join(root, case))
            with open(os.path.join(root, case, "report.json"), "w") as r:
                json.dump({"complete": True, "warnings": [], "root": report_root}, r)


def run_script(script, *args):
    return subprocess.run([sys.executable, script, *args], capture_output=True, text=True)


def printed_rows(out):
    """case -> its printed columns, from the rows between the header and
    the closing summary line."""
    return {cols[1]: cols for cols in (line.split("\t") for line in out.splitlines()[1:-1])}
