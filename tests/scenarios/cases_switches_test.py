#!/usr/bin/env python3
"""Every switch a scenario case names exists where the run passes it.

    cases_switches_test.py BUILD_DIR SOURCE_DIR

scenarios/run.sh hands a shop case's switches to `sonde demo --problems`
(which accepts only the names it lists) and from there to the shop; a
ledger or ticket-office case's switches go straight to that system. A
switch one of them does not know fails the case only when the suite runs
(minutes in); this test finds it at once, reading the same cases files
and the binaries' own --help."""
import os
import re
import subprocess
import sys
import unittest

BUILD = SOURCE = ""


def case_switches(cases_file):
    """{case id: [switch names]} from a cases file's third column."""
    switches = {}
    with open(cases_file) as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            fields = [x.strip() for x in line.split("|")]
            if len(fields) < 5:
                continue
            switches[fields[0]] = [s for s in fields[2].split() if s != "none"]
    return switches


def help_text(*command):
    done = subprocess.run(command, capture_output=True, text=True, timeout=30)
    return done.stdout + done.stderr


def lists(text, switch):
    """Whether --help text names --SWITCH as a whole word."""
    return re.search(r"(?<![\w-])--" + re.escape(switch) + r"(?![\w-])", text) is not None


def demo_problems(text):
    """The names `sonde demo --problems` accepts, from its --help."""
    found = re.search(r"--problems TEXT:\{([^}]*)\}", text)
    return set(found.group(1).split(",")) if found else set()


class CasesSwitches(unittest.TestCase):
    def check_system(self, cases_file, binary, accepted_names=None):
        cases = case_switches(os.path.join(SOURCE, cases_file))
        self.assertGreater(len(cases), 5, cases_file)
        text = help_text(os.path.join(BUILD, "examples", binary), "--help")
        self.assertTrue(text.startswith("usage: " + binary), text[:200])
        # The check can fail: a name the system does not have is not listed.
        self.assertFalse(lists(text, "no-such-switch"))
        for case, switches in cases.items():
            for switch in switches:
                self.assertTrue(lists(text, switch), f"{cases_file} {case}: {binary} has no --{switch}")
                if accepted_names is not None:
                    self.assertIn(switch, accepted_names,
                                  f"{cases_file} {case}: sonde demo --problems refuses '{switch}'")

    def test_shop_cases(self):
        problems = demo_problems(help_text(os.path.join(BUILD, "src", "cli", "sonde"), "demo", "--help"))
        self.assertIn("stifle", problems)
        self.assertNotIn("no-such-switch", problems)
        self.check_system("scenarios/cases.txt", "shop", problems)

    def test_ledger_cases(self):
        self.check_system("scenarios/ledger/cases.txt", "ledger")

    def test_ticket_office_cases(self):
        self.check_system("scenarios/tickets/cases.txt", "tickets")

    def test_the_reader_takes_the_third_column(self):
        cases = case_switches(os.path.join(SOURCE, "scenarios/cases.txt"))
        self.assertEqual(cases["tc01"], [])
        self.assertEqual(cases["tc07"], ["ramp", "hiccups"])


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit("usage: cases_switches_test.py BUILD_DIR SOURCE_DIR")
    BUILD, SOURCE = sys.argv[1], sys.argv[2]
    unittest.main(argv=sys.argv[:1])
