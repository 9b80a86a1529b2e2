#!/usr/bin/python3
# Copyright kioskd contributors. Licensed under the Apache License, Version 2.0.

from __future__ import annotations

DOCUMENTATION = r"""
module: kioskd_web_app
short_description: A web app's manifest deployed on a kiosk, checked before it replaces the installed one
description:
  - Installs I(content) as C(APPS_DIR/ID.toml), root's and readable by all (directory 0755, file
    0644: a manifest holds no secret, and the bridge reads it as an unprivileged user), the
    manifest that declares a web page's restrictions and the origins whose pages may read their
    states (docs/browsers.md, Web apps).
  - The new text is checked on the kiosk with C(kioskctl web-app check) first (in check mode too);
    a manifest that does not check fails the task and the installed file is left as it was.
  - When the file changed, C(kioskctl reload) makes kioskd declare the app again at once (new
    restrictions start as allow, states already set are kept) and put its origins in Chromium's
    policy; without it kioskd reads the manifest at its next start or reload.
  - I(state=absent) removes the file; the app stays registered, with its states, until
    C(kioskctl forget) (kioskd_restriction does not forget apps).
  - Reports a diff of the file (C(--diff)). Needs python3 on the kiosk.
options:
  id: {description: "The web app's reverse-DNS id; the file is ID.toml.", type: str, required: true}
  content: {description: "The manifest's text (e.g. from lookup('file', ...)); a final newline is added when missing.", type: str}
  state: {description: present installs it, absent removes the file., type: str, default: present, choices: [present, absent]}
  reload: {description: Make kioskd read the manifests again when the file changed., type: bool, default: true}
  apps_dir: {description: kioskd's directory of web apps' manifests., type: path, default: /etc/kioskd/apps}
  kioskctl: {description: kioskctl's path on the kiosk (default from PATH)., type: path}
author: kioskd contributors
"""

EXAMPLES = r"""
- name: The museum guide's restrictions, checked on each kiosk before they are installed
  kioskd.kiosk.kioskd_web_app:
    id: org.example.MuseumGuide
    content: "{{ lookup('ansible.builtin.file', 'files/org.example.MuseumGuide.toml') }}"
"""

RETURN = r"""
path: {description: The manifest's file., returned: always, type: str}
reloaded: {description: Whether kioskd read the manifests again., returned: always, type: bool}
check: {description: What kioskctl web-app check printed (errors on failure)., returned: when checked, type: str}
changes: {description: "What changed or would change: content, directory or mode.", returned: with state=present and a manifest that checks, type: list, elements: str}
"""

import os
import re
import stat
import tempfile

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.kioskd.kiosk.plugins.module_utils import files
from ansible_collections.kioskd.kiosk.plugins.module_utils.kioskctl import KIOSKCTL_ARGS, Kioskctl

# kioskd's rule for an app id, enough to keep a path out of it: kioskctl web-app check has the
# whole rule (labels, lengths) and says what is wrong.
ID = re.compile(r"^[A-Za-z_-][A-Za-z0-9_-]*(\.[A-Za-z_-][A-Za-z0-9_-]*)+$")


def diff(before, after, path):
    return dict(before=before, after=after, before_header=path, after_header=path)


def main():
    module = AnsibleModule(
        argument_spec=dict(
            id=dict(type="str", required=True),
            content=dict(type="str"),
            state=dict(type="str", default="present", choices=["present", "absent"]),
            reload=dict(type="bool", default=True),
            apps_dir=dict(type="path", default="/etc/kioskd/apps"),
            **KIOSKCTL_ARGS),
        required_if=[("state", "present", ["content"])],
        supports_check_mode=True)
    p = module.params
    if not ID.match(p["id"]) or len(p["id"]) > 255:
        module.fail_json(msg="%r is not a web app id (reverse-DNS, like org.example.MuseumGuide)" % p["id"])
    directory = p["apps_dir"]
    name = p["id"] + ".toml"
    path = os.path.join(directory, name)
    ctl = Kioskctl(module)
    result = dict(changed=False, path=path, reloaded=False)

    def reload():
        rc, out, err = ctl.run(["--json", "reload"])
        if rc != 0:
            module.fail_json(msg="kioskd did not read the manifests again: %s" % err.strip(), rc=rc, stderr=err,
                             **result)
        result["reloaded"] = True

    before = files.read(path)
    if p["state"] == "absent":
        if before is not None:
            result["changed"] = True
            result["diff"] = diff(before, "", path)
            if not module.check_mode:
                os.unlink(path)
                if p["reload"]:
                    reload()
        module.exit_json(**result)

    text = p["content"] if p["content"].endswith("\n") else p["content"] + "\n"

    # Check it first, whatever else, under its own name (the id must match it): a manifest that
    # does not check is never installed.
    with tempfile.TemporaryDirectory(dir=module.tmpdir) as checkdir:
        candidate = files.write_new(checkdir, text, 0o644, name=name)
        rc, out, err = ctl.run(["web-app", "check", candidate])
        report = (out + err).replace(candidate, path)
        result["check"] = report
        if rc != 0:
            module.fail_json(msg="%s does not check; the installed file is left as it was:\n%s" % (path, report.strip()),
                             rc=rc, **result)

    changes = []
    try:
        st = os.stat(directory)
    except FileNotFoundError:
        st = None
    if st is None or stat.S_IMODE(st.st_mode) != 0o755 or st.st_uid != 0 or st.st_gid != 0:
        changes.append("directory %s 0755 root:root" % directory)
        if not module.check_mode:
            if st is None:
                os.makedirs(directory, 0o755)
            os.chown(directory, 0, 0)
            os.chmod(directory, 0o755)

    content_changed = before != text
    if content_changed:
        changes.append("content")
        result["diff"] = diff(before or "", text, path)
    else:
        file_st = os.stat(path)
        if stat.S_IMODE(file_st.st_mode) != 0o644 or file_st.st_uid != 0 or file_st.st_gid != 0:
            changes.append("mode 0644 root:root")

    result["changed"] = bool(changes)
    result["changes"] = changes
    if not changes or module.check_mode:
        module.exit_json(**result)

    if content_changed:
        files.install(path, text, 0o644)
    else:
        os.chown(path, 0, 0)
        os.chmod(path, 0o644)
    if content_changed and p["reload"]:
        reload()
    module.exit_json(**result)


if __name__ == "__main__":
    main()
