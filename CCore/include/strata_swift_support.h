/* What the Swift module takes from C: portable atomics (Synchronization's Atomic needs macOS 15)
 * and the runtime's conditional retain, which Swift does not expose. Not part of Strata's C
 * ABI: that is strata.h, and `make install` installs only it. */
#ifndef STRATA_SWIFT_SUPPORT_H
#define STRATA_SWIFT_SUPPORT_H

/* Add `delta` to *count atomically; the value before. */
static inline long strata_swift_atomic_add(long *count, long delta) {
    return __atomic_fetch_add(count, delta, __ATOMIC_ACQ_REL);
}

/* The Swift runtime's retain of an object unless its deinit has begun (then NULL): what the
 * load of a weak reference does. Exported by libswiftCore on every platform (part of its stable
 * ABI since Swift 5.0). */
void *swift_tryRetain(void *object);

/* Retain `object` (a Swift class instance) unless it is being destroyed: whether it was. */
static inline _Bool strata_swift_try_retain(void *object) { return swift_tryRetain(object) != 0; }

#endif
