/* What the Swift module inlines from C because Swift has no portable atomics on every platform
 * it builds for (Synchronization's Atomic needs macOS 15). Not part of Strata's C ABI: that is
 * strata.h, and `make install` installs only it. */
#ifndef STRATA_SWIFT_SUPPORT_H
#define STRATA_SWIFT_SUPPORT_H

/* Add `delta` to *count atomically; the value before. */
static inline long strata_swift_atomic_add(long *count, long delta) {
    return __atomic_fetch_add(count, delta, __ATOMIC_ACQ_REL);
}

#endif
