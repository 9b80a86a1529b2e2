#!/usr/bin/python3
# Copyright kioskd contributors. Licensed under the Apache License, Version 2.0.

from __future__ import annotations

DOCUMENTATION = r"""
module: kioskd_facts
short_description: What a kiosk runs, as the fact kioskd
description:
  - Sets the fact C(kioskd) from C(kioskctl --json status), C(apps), C(restrictions APP) for
    each app, and C(profiles).
  - Read-only; runs the same in check mode. Needs python3 on the kiosk.
options:
  restrictions: {description: Also list each app's restrictions., type: bool, default: true}
  kioskctl: {description: kioskctl's path on the kiosk (default from PATH)., type: path}
author: kioskd contributors
"""

EXAMPLES = r"""
- kioskd.kiosk.kioskd_facts:
- ansible.builtin.debug:
    msg: "{{ inventory_hostname }}: kioskd {{ kioskd.version }}, session {{ kioskd.session_state }}"
"""

RETURN = r"""
ansible_facts:
  description: >-
    kioskd: version, session_state, active_profile, session_deadline_usec, session_problem (when
    reported), apps ([{id, restrictions, denied, restriction_states}]), profiles ([{name,
    description, checks, holds_hash}]).
  returned: always
  type: dict
"""

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.kioskd.kiosk.plugins.module_utils.kioskctl import KIOSKCTL_ARGS, Kioskctl


def main():
    module = AnsibleModule(
        argument_spec=dict(restrictions=dict(type="bool", default=True), **KIOSKCTL_ARGS),
        supports_check_mode=True)
    ctl = Kioskctl(module)
    status = ctl.status()
    facts = dict((key, status[key]) for key in
                 ("version", "session_state", "active_profile", "session_deadline_usec", "session_problem")
                 if key in status)
    apps = ctl.json(["apps"]).get("apps", [])
    if module.params["restrictions"]:
        for app in apps:
            app["restriction_states"] = dict(
                (r["id"], r["state"]) for r in ctl.json(["restrictions", app["id"]]).get("restrictions", []))
    facts["apps"] = apps
    facts["profiles"] = ctl.json(["profiles"])
    module.exit_json(changed=False, ansible_facts=dict(kioskd=facts))


if __name__ == "__main__":
    main()
