/*
 * testkey.h — the crash, power-loss, fault and stress harnesses on encrypted files: with
 * STRATA_TEST_ENCRYPTED=1 in the environment (make crashtest ENCRYPTED=1, ...), every database
 * they open gets this fixed 64-byte key.
 */
#ifndef STRATA_TESTKEY_H
#define STRATA_TESTKEY_H

#include "strata.h"

#include <stdint.h>
#include <stdlib.h>

__attribute__((unused)) static bool tk_encrypted(void) {
    const char *e = getenv("STRATA_TEST_ENCRYPTED");
    return e && e[0] == '1';
}

/* Give o the test key when the harness runs encrypted. */
__attribute__((unused)) static void tk_options(strata_options *o) {
    static uint8_t key[64];
    for (int i = 0; i < 64; i++) key[i] = (uint8_t)(0xA5 ^ (i * 29));
    if (!tk_encrypted()) return;
    o->encryption_key = key;
    o->encryption_key_len = sizeof key;
}

#endif
