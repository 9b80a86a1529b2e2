# Copyright kioskd contributors. Licensed under the Apache License, Version 2.0.
"""Runs kioskctl on the kiosk and reads its --json output (docs/kioskctl.md)."""

from __future__ import annotations

import json

KIOSKCTL_ARGS = dict(
    kioskctl=dict(type="path", default=None),
)


class Kioskctl:
    """kioskctl on the managed host: the module's only way to kioskd (no other agent)."""

    def __init__(self, module):
        self.module = module
        path = module.params.get("kioskctl")
        self.path = path or module.get_bin_path("kioskctl", required=True)

    def run(self, args, data=None, check_rc=False):
        """(rc, stdout, stderr) of kioskctl ARGS, with DATA on stdin (never on the command line)."""
        return self.module.run_command(
            [self.path] + list(args), data=data, binary_data=False, check_rc=check_rc,
            environ_update={"LC_ALL": "C.UTF-8"})

    def json(self, args, data=None, what=None):
        """kioskctl --json ARGS parsed; on failure the module fails with kioskctl's message."""
        rc, out, err = self.run(["--json"] + list(args), data=data)
        if rc != 0:
            self.module.fail_json(
                msg="kioskctl %s failed: %s" % (what or " ".join(args), err.strip() or "exit status %d" % rc),
                rc=rc, stdout=out, stderr=err)
        try:
            return json.loads(out)
        except ValueError as error:
            self.module.fail_json(msg="kioskctl --json %s printed no JSON: %s" % (" ".join(args), error),
                                  stdout=out, stderr=err)

    def status(self):
        return self.json(["status"])
