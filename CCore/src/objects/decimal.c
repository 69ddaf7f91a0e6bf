/*
 * decimal.c — decimal128 values (IEEE 754-2008, binary integer decimal encoding, as Realm and
 * Swift's Decimal128 store them) compared by the numbers they stand for.
 *
 * Layout of the 128 bits (high word first): sign (bit 127); when bits 126..125 are not 11, a
 * 14-bit biased exponent (126..113) and a 113-bit coefficient (112..0); else 11110 is infinity,
 * 11111 NaN, and other 11xx forms carry a coefficient of 2^113 or more, which is over 10^34 and
 * so non-canonical: read as zero, as IEEE says. Value = (-1)^sign × coefficient × 10^(exponent
 * − 6176).
 */
#include "objects/private.h"

typedef struct dec {
    bool neg, inf, nan;
    unsigned __int128 coeff; /* < 10^34 */
    int exp;
} dec;

static dec decode(const strata_value *v) {
    dec d = {0};
    uint64_t hi = v->u.decimal.high, lo = v->u.decimal.low;
    d.neg = hi >> 63;
    if (((hi >> 61) & 3) == 3) {
        unsigned top = (unsigned)(hi >> 58) & 0x1F;
        if (top == 0x1F) d.nan = true;
        else if (top == 0x1E) d.inf = true;
        return d; /* (a non-canonical coefficient: zero) */
    }
    d.exp = (int)((hi >> 49) & 0x3FFF) - 6176;
    d.coeff = ((unsigned __int128)(hi & 0x1FFFFFFFFFFFFull) << 64) | lo;
    if (d.coeff >= (unsigned __int128)10000000000000000ull * 10000000000000000ull * 100) d.coeff = 0;
    return d;
}

static int digits(unsigned __int128 c) {
    int n = 0;
    while (c) c /= 10, n++;
    return n;
}

/* |a| against |b|, both finite. */
static int magnitude_cmp(dec a, dec b) {
    if (!a.coeff || !b.coeff) return (a.coeff != 0) - (b.coeff != 0);
    int na = digits(a.coeff), nb = digits(b.coeff);
    int ma = na + a.exp, mb = nb + b.exp; /* the leading digit's place */
    if (ma != mb) return ma > mb ? 1 : -1;
    while (na < nb) a.coeff *= 10, na++; /* same place: the same number of digits (at most 34) */
    while (nb < na) b.coeff *= 10, nb++;
    return (a.coeff > b.coeff) - (a.coeff < b.coeff);
}

int st_decimal_cmp(const strata_value *a, const strata_value *b, bool *ok) {
    dec x = decode(a), y = decode(b);
    *ok = !x.nan && !y.nan;
    if (!*ok) return 0;
    bool xz = !x.inf && !x.coeff, yz = !y.inf && !y.coeff;
    if (xz && yz) return 0; /* +0 and -0 */
    int sx = xz ? 0 : x.neg ? -1 : 1, sy = yz ? 0 : y.neg ? -1 : 1;
    if (sx != sy) return (sx > sy) - (sx < sy);
    int m = x.inf || y.inf ? (x.inf && y.inf ? 0 : x.inf ? 1 : -1) : magnitude_cmp(x, y);
    return sx < 0 ? -m : m;
}
