#!/usr/bin/python3
# Copyright kioskd contributors. Licensed under the Apache License, Version 2.0.

from __future__ import annotations

DOCUMENTATION = r"""
module: kioskd_restriction
short_description: One restriction's state (allow or deny) on a kiosk
description:
  - Reads the restriction with C(kioskctl --json restrictions APP) and changes it with
    C(kioskctl allow) or C(kioskctl deny) only when it differs.
  - The app must have registered the restriction (kioskd knows no other).
  - Needs python3 on the kiosk; runs kioskctl there, as root (or a uid polkit allows).
options:
  app: {description: The app id (reverse-DNS)., type: str, required: true}
  id: {description: The restriction id., type: str, required: true}
  state: {description: The state it must have., type: str, required: true, choices: [allow, deny]}
  kioskctl: {description: kioskctl's path on the kiosk (default from PATH)., type: path}
author: kioskd contributors
"""

EXAMPLES = r"""
- name: The map's print button stays locked
  kioskd.kiosk.kioskd_restriction:
    app: org.example.MuseumMap
    id: org.example.MuseumMap.print
    state: deny
"""

RETURN = r"""
before: {description: The state before., returned: always, type: str}
state: {description: The state after (in check mode, what it would be)., returned: always, type: str}
"""

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.kioskd.kiosk.plugins.module_utils.kioskctl import KIOSKCTL_ARGS, Kioskctl


def main():
    module = AnsibleModule(
        argument_spec=dict(
            app=dict(type="str", required=True),
            id=dict(type="str", required=True),
            state=dict(type="str", required=True, choices=["allow", "deny"]),
            **KIOSKCTL_ARGS),
        supports_check_mode=True)
    app, rid, wanted = module.params["app"], module.params["id"], module.params["state"]
    ctl = Kioskctl(module)
    listing = ctl.json(["restrictions", app])
    found = [r for r in listing.get("restrictions", []) if r.get("id") == rid]
    if not found:
        module.fail_json(msg="%s has no restriction %s (known: %s)" % (
            app, rid, ", ".join(r.get("id", "") for r in listing.get("restrictions", [])) or "none"))
    before = found[0].get("state")
    result = dict(changed=before != wanted, before=before, state=wanted,
                  diff=dict(before="%s %s\n" % (rid, before), after="%s %s\n" % (rid, wanted),
                            before_header=app, after_header=app))
    if result["changed"] and not module.check_mode:
        ctl.json(["allow" if wanted == "allow" else "deny", app, rid])
    module.exit_json(**result)


if __name__ == "__main__":
    main()
