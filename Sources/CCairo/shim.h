#ifndef CCAIRO_SHIM_H
#define CCAIRO_SHIM_H

/* cairo for Swift (kioskctl-profile-png only): its image surfaces, paths, toy text API and PNG
 * reading and writing through streams. Everything used is a plain function, so no wrapper is
 * needed here. */

#include <cairo.h>

#endif
