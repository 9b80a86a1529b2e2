#!/usr/bin/python3
# Copyright kioskd contributors. Licensed under the Apache License, Version 2.0.

from __future__ import annotations

DOCUMENTATION = r"""
module: kioskd_passcode
short_description: The kiosk's passcode (the one that ends a session), from a vault variable
description:
  - Sets kioskd's passcode with C(kioskctl passcode set --passcode-stdin); the passcodes go on
    kioskctl's stdin, never on a command line, and are never logged (C(no_log)).
  - kioskd keeps only a yescrypt hash and tells nobody whether a passcode matches it (each wrong
    guess counts in its throttle), so the module cannot know whether the stored passcode is
    already I(passcode). As Ansible's user module does with passwords, I(update_password)
    decides - C(always) sets it on every run (always reported as changed), C(on_create) sets it
    only when the kiosk has none (kioskd says so: C(kioskctl --json status), its C(passcode_set)
    field, from kioskd's C(PasscodeSet) property).
  - What kioskctl prints is returned with anything shaped like a crypt(3) hash redacted.
  - Needs python3 on the kiosk; runs as root.
options:
  passcode: {description: The new passcode (digits; use at least 6)., type: str, required: true, no_log: true}
  current_passcode: {description: The passcode set now; empty when none is., type: str, default: '', no_log: true}
  update_password: {description: always or on_create (see above)., type: str, default: always, choices: [always, on_create]}
  kioskctl: {description: kioskctl's path on the kiosk (default from PATH)., type: path}
author: kioskd contributors
"""

EXAMPLES = r"""
- name: The passcode, from the vault, set on kiosks that have none
  kioskd.kiosk.kioskd_passcode:
    passcode: "{{ vault_kiosk_passcode }}"
    update_password: on_create
"""

RETURN = r"""
had_passcode: {description: Whether a passcode hash was stored before., returned: always, type: bool}
"""

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.kioskd.kiosk.plugins.module_utils.kioskctl import KIOSKCTL_ARGS, Kioskctl
from ansible_collections.kioskd.kiosk.plugins.module_utils import redact


def stored_hash(ctl):
    """Whether kioskd holds a passcode set with SetPasscode, as kioskd itself says."""
    status = ctl.status()
    if not isinstance(status.get("passcode_set"), bool):
        ctl.module.fail_json(msg="kioskctl --json status says nothing of passcode_set: kioskd is older than this collection")
    return status["passcode_set"]


def main():
    module = AnsibleModule(
        argument_spec=dict(
            passcode=dict(type="str", required=True, no_log=True),
            current_passcode=dict(type="str", default="", no_log=True),
            update_password=dict(type="str", default="always", choices=["always", "on_create"], no_log=False),
            **KIOSKCTL_ARGS),
        supports_check_mode=True)
    p = module.params
    for name in ("passcode", "current_passcode"):
        if "\n" in p[name] or "\r" in p[name]:
            module.fail_json(msg="%s may not contain a line break" % name)
    if not p["passcode"]:
        module.fail_json(msg="passcode may not be empty")
    ctl = Kioskctl(module)
    had = stored_hash(ctl)
    result = dict(had_passcode=had, changed=p["update_password"] == "always" or not had)
    if result["changed"] and not module.check_mode:
        # Two lines on stdin: the current passcode (empty when none is set), then the new one.
        rc, out, err = ctl.run(["--json", "passcode", "set", "--passcode-stdin"],
                               data="%s\n%s\n" % (p["current_passcode"] if had else "", p["passcode"]))
        if rc != 0:
            module.fail_json(msg="kioskctl passcode set failed: %s" % redact.redact(err.strip()), rc=rc, **result)
        if err.strip():
            result["warnings"] = [redact.redact(err.strip())]
    module.exit_json(**result)


if __name__ == "__main__":
    main()
