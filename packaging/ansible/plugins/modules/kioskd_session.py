#!/usr/bin/python3
# Copyright kioskd contributors. Licensed under the Apache License, Version 2.0.

from __future__ import annotations

DOCUMENTATION = r"""
module: kioskd_session
short_description: A kiosk's guided-access session - started with a profile, ended, extended
description:
  - C(state=started) starts a session with I(profile) unless one with that profile is already
    active (or expired); a session with another profile is an error (end it first).
  - C(state=ended) ends the session if there is one - with I(passcode) when given (C(kioskctl
    end --passcode-stdin), a wrong one counts in kioskd's throttle), else C(kioskctl force-end).
  - I(extend) moves the end of the time limit (C(kioskctl extend)); it is not idempotent
    (like adding time at the kiosk), so it reports a change on every run.
  - Needs python3 on the kiosk; runs as root (or a uid polkit allows).
options:
  state: {description: started or ended., type: str, default: started, choices: [started, ended]}
  profile: {description: The profile the session runs (required with state=started)., type: str}
  trial: {description: With state=started, start a trial session that ends by itself after this long unless confirmed (kioskctl start --trial)., type: str}
  extend: {description: With state=started, more time (15m) or less (-5m) for the running session., type: str}
  passcode: {description: With state=ended, end it with this passcode instead of force-end., type: str, no_log: true}
  kioskctl: {description: kioskctl's path on the kiosk (default from PATH)., type: path}
author: kioskd contributors
"""

EXAMPLES = r"""
- name: Each kiosk runs the museum profile
  kioskd.kiosk.kioskd_session:
    state: started
    profile: museum
- name: Fifteen minutes more for the evening event
  kioskd.kiosk.kioskd_session:
    profile: museum
    extend: 15m
"""

RETURN = r"""
status: {description: kioskctl --json status after the change (before it, in check mode)., returned: always, type: dict}
"""

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.kioskd.kiosk.plugins.module_utils.kioskctl import KIOSKCTL_ARGS, Kioskctl

RUNNING = ("active", "expired")


def describe(status):
    if status.get("session_state") in RUNNING:
        return "session %s with %s\n" % (status["session_state"], status.get("active_profile", ""))
    return "no session\n"


def main():
    module = AnsibleModule(
        argument_spec=dict(
            state=dict(type="str", default="started", choices=["started", "ended"]),
            profile=dict(type="str"),
            trial=dict(type="str"),
            extend=dict(type="str"),
            passcode=dict(type="str", no_log=True),
            **KIOSKCTL_ARGS),
        required_if=[("state", "started", ["profile"])],
        mutually_exclusive=[("passcode", "profile"), ("passcode", "extend"), ("passcode", "trial")],
        supports_check_mode=True)
    p = module.params
    ctl = Kioskctl(module)
    status = ctl.status()
    running = status.get("session_state") in RUNNING
    commands = []
    after = "no session\n"
    if p["state"] == "started":
        after = "session active with %s\n" % p["profile"]
        if running and status.get("active_profile") != p["profile"]:
            module.fail_json(msg="A session with the profile %s is running; end it first." % status.get("active_profile"),
                             status=status)
        if not running:
            commands.append((["start", "--trial", p["trial"], p["profile"]] if p["trial"] else ["start", p["profile"]], None))
        if p["extend"]:
            commands.append((["extend", "--", p["extend"]], None))
            after = after.rstrip("\n") + ", extended by %s\n" % p["extend"]
    elif running:
        if p["passcode"] is not None:
            commands.append((["end", "--passcode-stdin"], p["passcode"] + "\n"))
        else:
            commands.append((["force-end"], None))
    result = dict(changed=bool(commands), status=status,
                  diff=dict(before=describe(status), after=after if commands else describe(status)))
    if module.check_mode:
        module.exit_json(**result)
    for args, data in commands:
        result["status"] = ctl.json(args, data=data, what=args[0])
    module.exit_json(**result)


if __name__ == "__main__":
    main()
