#pragma once
// glibc's malloc.h, which Swift's Glibc module leaves out: malloc_trim(3), which kioskd calls
// once after loading its state (KioskService.swift).
#include <malloc.h>
