#pragma once
// What kioskctl needs from glibc to measure text in terminal columns (TextLayout.swift).
#include <wchar.h>

// glibc declares wcwidth(3) only under _XOPEN_SOURCE, which Swift's Glibc module is not built
// with, so Swift cannot see it; this declaration is glibc's own.
extern int wcwidth(wchar_t c);

/// The columns a Unicode scalar takes in the current LC_CTYPE; -1 if it is not printable.
static inline int kioskctl_wcwidth(unsigned int scalar) { return wcwidth((wchar_t)scalar); }
