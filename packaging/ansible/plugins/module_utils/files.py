# Copyright kioskd contributors. Licensed under the Apache License, Version 2.0.
"""The files the modules install on a kiosk (profiles, web apps' manifests): read, written new
with their mode and root as owner, replaced atomically."""

from __future__ import annotations

import os
import tempfile


def read(path):
    """PATH's text (bytes that are not UTF-8 replaced), or None when there is no such file."""
    try:
        with open(path, "rb") as f:
            return f.read().decode("utf-8", "replace")
    except FileNotFoundError:
        return None


def write_new(directory, text, mode, name=None, prefix="."):
    """TEXT in a new file of DIRECTORY, MODE and root:root, synced; named NAME, or a temp name
    starting with PREFIX. Returns its path."""
    if name is None:
        fd, path = tempfile.mkstemp(prefix=prefix, dir=directory)
    else:
        path = os.path.join(directory, name)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    try:
        os.fchmod(fd, mode)
        os.fchown(fd, 0, 0)
        os.write(fd, text.encode("utf-8"))
        os.fsync(fd)
    finally:
        os.close(fd)
    return path


def install(path, text, mode):
    """Replaces PATH with TEXT, MODE and root's, atomically: a temp file in the same directory,
    renamed over it, and the directory synced."""
    directory = os.path.dirname(path)
    temp = write_new(directory, text, mode, prefix="." + os.path.basename(path) + ".")
    try:
        os.rename(temp, path)
    except OSError:
        os.unlink(temp)
        raise
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
