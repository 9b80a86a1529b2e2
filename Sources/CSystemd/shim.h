#ifndef CSYSTEMD_SHIM_H
#define CSYSTEMD_SHIM_H

/* libsystemd for Swift. Everything here is `static inline`, so the Swift
 * compiler's clang compiles it into the importing module: no C target. */

#define SD_JOURNAL_SUPPRESS_LOCATION 1

#include <errno.h>
#include <string.h>
#include <poll.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <sys/uio.h>
#include <systemd/sd-bus.h>
#include <systemd/sd-bus-vtable.h>
#include <systemd/sd-daemon.h>
#include <systemd/sd-device.h>
#include <systemd/sd-event.h>
#include <systemd/sd-journal.h>

/* The START entry of an sd_bus_vtable must hold the *address* of the library's
 * `sd_bus_object_vtable_format`: that is how sd-bus recognises the v242+ layout
 * with argument names. Swift imports the `extern const` as a value, so it cannot
 * take the real address. Without it, introspection shows `arg_0`, `arg_1`. */
static inline const unsigned *csd_vtable_format_reference(void) {
    return &sd_bus_object_vtable_format;
}

/* SD_BUS_VTABLE_START(flags) */
static inline sd_bus_vtable csd_vtable_start(uint64_t flags) {
    sd_bus_vtable v;
    memset(&v, 0, sizeof v);
    v.type = _SD_BUS_VTABLE_START;
    v.flags = flags;
    v.x.start.element_size = sizeof(sd_bus_vtable);
    v.x.start.features = _SD_BUS_VTABLE_PARAM_NAMES;
    v.x.start.vtable_format_reference = &sd_bus_object_vtable_format;
    return v;
}

/* SD_BUS_METHOD_WITH_NAMES_OFFSET(member, signature, names, result, handler, offset, flags):
 * `names` is the in-names then out-names, each NUL-terminated, then one more NUL. */
static inline sd_bus_vtable csd_vtable_method(const char *member, const char *signature,
                                              const char *result, const char *names,
                                              sd_bus_message_handler_t handler,
                                              size_t offset, uint64_t flags) {
    sd_bus_vtable v;
    memset(&v, 0, sizeof v);
    v.type = _SD_BUS_VTABLE_METHOD;
    v.flags = flags;
    v.x.method.member = member;
    v.x.method.signature = signature;
    v.x.method.result = result;
    v.x.method.handler = handler;
    v.x.method.offset = offset;
    v.x.method.names = names;
    return v;
}

/* SD_BUS_SIGNAL_WITH_NAMES(member, signature, names, flags) */
static inline sd_bus_vtable csd_vtable_signal(const char *member, const char *signature,
                                              const char *names, uint64_t flags) {
    sd_bus_vtable v;
    memset(&v, 0, sizeof v);
    v.type = _SD_BUS_VTABLE_SIGNAL;
    v.flags = flags;
    v.x.signal.member = member;
    v.x.signal.signature = signature;
    v.x.signal.names = names;
    return v;
}

/* SD_BUS_PROPERTY(member, signature, get, offset, flags) */
static inline sd_bus_vtable csd_vtable_property(const char *member, const char *signature,
                                                sd_bus_property_get_t get,
                                                size_t offset, uint64_t flags) {
    sd_bus_vtable v;
    memset(&v, 0, sizeof v);
    v.type = _SD_BUS_VTABLE_PROPERTY;
    v.flags = flags;
    v.x.property.member = member;
    v.x.property.signature = signature;
    v.x.property.get = get;
    v.x.property.offset = offset;
    return v;
}

/* SD_BUS_VTABLE_END */
static inline sd_bus_vtable csd_vtable_end(void) {
    sd_bus_vtable v;
    memset(&v, 0, sizeof v);
    v.type = _SD_BUS_VTABLE_END;
    return v;
}

/* Flag constants from anonymous enums and macros, as plain uint64_t. */
static inline uint64_t csd_vtable_flag_unprivileged(void) { return SD_BUS_VTABLE_UNPRIVILEGED; }
static inline uint64_t csd_vtable_flag_deprecated(void) { return SD_BUS_VTABLE_DEPRECATED; }
static inline uint64_t csd_vtable_flag_hidden(void) { return SD_BUS_VTABLE_HIDDEN; }
static inline uint64_t csd_vtable_flag_no_reply(void) { return SD_BUS_VTABLE_METHOD_NO_REPLY; }
static inline uint64_t csd_vtable_flag_emits_change(void) { return SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE; }
static inline uint64_t csd_vtable_flag_emits_invalidation(void) { return SD_BUS_VTABLE_PROPERTY_EMITS_INVALIDATION; }
static inline uint64_t csd_vtable_flag_const(void) { return SD_BUS_VTABLE_PROPERTY_CONST; }
static inline uint64_t csd_vtable_flag_absolute_offset(void) { return SD_BUS_VTABLE_ABSOLUTE_OFFSET; }
static inline uint64_t csd_creds_euid_augment(void) { return SD_BUS_CREDS_EUID | SD_BUS_CREDS_AUGMENT; }

/* epoll_wait(2) as a plain system call (epoll_pwait with no signal mask, what glibc's
 * epoll_wait is on arm64): the count, or -errno. glibc's is a cancellation point, and in a
 * process with threads each call switches asynchronous cancellation on and off around the
 * system call; the event loop's waits are one per input frame, and nothing cancels its thread. */
static inline int csd_epoll_wait(int epfd, struct epoll_event *events, int max, int timeout) {
    long n = syscall(SYS_epoll_pwait, epfd, events, max, timeout, (void *)0, (size_t)8);
    return n < 0 ? -errno : (int)n;
}

/* SD_BUS_ERROR_NULL: a zeroed error, for sd_bus_call and friends. */
static inline sd_bus_error csd_bus_error_null(void) {
    sd_bus_error e = SD_BUS_ERROR_NULL;
    return e;
}

#endif
