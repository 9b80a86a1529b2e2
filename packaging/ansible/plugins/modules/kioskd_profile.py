#!/usr/bin/python3
# Copyright kioskd contributors. Licensed under the Apache License, Version 2.0.

from __future__ import annotations

DOCUMENTATION = r"""
module: kioskd_profile
short_description: A profile deployed on a kiosk, checked before it replaces the installed one
description:
  - Installs I(content) as C(PROFILE_DIR/NAME.toml), root's alone (directory 0700, file 0600, as
    C(make install) and the .deb install profiles; kioskd refuses a passcode hash others can read).
  - The new text is checked on the kiosk with C(kioskctl profile check) first (in check mode too);
    a profile that does not check fails the task and the installed file is left as it was, so a
    session running it is untouched.
  - When the kiosk's session runs this profile and the file changed, C(kioskctl reload) makes the
    session take it; if kioskd refuses it, the old file is put back and the task fails.
  - >-
    Reports a diff of the file (C(--diff)). A passcode hash is never shown, logged or returned -
    I(content) is C(no_log), so the invocation AnsibleModule logs on the kiosk (syslog or the
    journal) leaves it out; in the diff and in every returned value a C(hash = ...) line keeps its
    key and loses its value, C(hash = "<redacted>"), and the new text's line reads
    C(hash = "<redacted: changed>") when the hash changed (the change is listed in I(changes) as
    C(passcode hash) too); anything else shaped like a crypt(3) hash reads C(<redacted>).
  - Needs python3 on the kiosk.
options:
  name: {description: The profile name (the file is NAME.toml)., type: str, required: true}
  content: {description: "The profile's text (e.g. from lookup('file', ...)); a final newline is added when missing; it may hold a passcode hash, so it is never logged or returned.", type: str, no_log: true}
  state: {description: present installs it, absent removes the file., type: str, default: present, choices: [present, absent]}
  reload: {description: Reload the live session when it runs this profile and the file changed., type: bool, default: true}
  profile_dir: {description: kioskd's profile directory., type: path, default: /etc/kioskd/profiles}
  kioskctl: {description: kioskctl's path on the kiosk (default from PATH)., type: path}
author: kioskd contributors
"""

EXAMPLES = r"""
- name: The museum profile, checked on each kiosk before it is installed
  kioskd.kiosk.kioskd_profile:
    name: museum
    content: "{{ lookup('ansible.builtin.file', 'files/museum.toml') }}"
"""

RETURN = r"""
path: {description: The profile's file., returned: always, type: str}
reloaded: {description: Whether the live session took the new file., returned: always, type: bool}
check: {description: "What kioskctl profile check printed (warnings; errors on failure), hashes redacted.", returned: when checked, type: str}
changes: {description: "What changed or would change: content, passcode hash (the content changed and with it the hash), directory or mode.", returned: with state=present and a profile that checks, type: list, elements: str}
"""

import os
import re
import stat
import tempfile

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.kioskd.kiosk.plugins.module_utils.kioskctl import KIOSKCTL_ARGS, Kioskctl
from ansible_collections.kioskd.kiosk.plugins.module_utils import files, redact

NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$")


def main():
    module = AnsibleModule(
        argument_spec=dict(
            name=dict(type="str", required=True),
            # A profile may hold a passcode hash ([passcode] hash): never logged, never returned.
            content=dict(type="str", no_log=True),
            state=dict(type="str", default="present", choices=["present", "absent"]),
            reload=dict(type="bool", default=True),
            profile_dir=dict(type="path", default="/etc/kioskd/profiles"),
            **KIOSKCTL_ARGS),
        required_if=[("state", "present", ["content"])],
        supports_check_mode=True)
    p = module.params
    if not NAME.match(p["name"]) or p["name"].startswith("."):
        module.fail_json(msg="%r is not a profile name" % p["name"])
    directory = p["profile_dir"]
    path = os.path.join(directory, p["name"] + ".toml")
    ctl = Kioskctl(module)
    result = dict(changed=False, path=path, reloaded=False)
    changes = []

    before = files.read(path)
    if p["state"] == "absent":
        if before is not None:
            result["changed"] = True
            result["diff"] = redact.diff(before, "", path)
            if not module.check_mode:
                os.unlink(path)
        module.exit_json(**result)

    text = p["content"] if p["content"].endswith("\n") else p["content"] + "\n"

    # Check it first, whatever else: a profile that does not check is never installed.
    with tempfile.TemporaryDirectory(dir=module.tmpdir) as checkdir:
        candidate = files.write_new(checkdir, text, 0o600, prefix=p["name"] + ".")
        rc, out, err = ctl.run(["profile", "check", candidate])
        report = redact.redact((out + err).replace(candidate, path))
        result["check"] = report
        if rc != 0:
            module.fail_json(msg="%s does not check; the installed file is left as it was:\n%s" % (path, report.strip()),
                             rc=rc, **result)

    # The directory: root's alone.
    try:
        st = os.stat(directory)
    except FileNotFoundError:
        st = None
    if st is None or stat.S_IMODE(st.st_mode) != 0o700 or st.st_uid != 0 or st.st_gid != 0:
        changes.append("directory %s 0700 root:root" % directory)
        if not module.check_mode:
            if st is None:
                os.makedirs(directory, 0o700)
            os.chown(directory, 0, 0)
            os.chmod(directory, 0o700)

    file_st = os.stat(path) if before is not None else None
    content_changed = before != text
    if content_changed:
        changes.append("content")
        if redact.hash_changed(before, text):
            changes.append("passcode hash")
        result["diff"] = redact.diff(before or "", text, path)
    elif stat.S_IMODE(file_st.st_mode) != 0o600 or file_st.st_uid != 0 or file_st.st_gid != 0:
        changes.append("mode 0600 root:root")

    result["changed"] = bool(changes)
    result["changes"] = changes
    if not changes or module.check_mode:
        module.exit_json(**result)

    if content_changed:
        files.install(path, text, 0o600)
    else:
        os.chown(path, 0, 0)
        os.chmod(path, 0o600)

    if content_changed and p["reload"]:
        status = ctl.status()
        if status.get("session_state") in ("active", "expired") and status.get("active_profile") == p["name"]:
            rc, out, err = ctl.run(["--json", "reload"])
            if rc != 0:
                # kioskd kept the last good profile: put its file back, so file and session agree.
                if before is None:
                    os.unlink(path)
                else:
                    files.install(path, before, 0o600)
                err = redact.redact(err)
                module.fail_json(msg="kioskd did not take %s; the old file is back: %s" % (path, err.strip()),
                                 rc=rc, stderr=err, **result)
            result["reloaded"] = True
    module.exit_json(**result)


if __name__ == "__main__":
    main()
