/*
 * decimal.c — decimal128 values (IEEE 754-2008, binary integer decimal encoding, as Realm and
 * Swift's Decimal128 store them) compared by the numbers they stand for, added, and divided by a
 * count (the @sum and @avg of a query), rounded half to even to 34 digits.
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

/* ------------------------------------------------------------------ arithmetic */

#define DEC_MAX_COEFF ((unsigned __int128)10000000000000000ull * 10000000000000000ull * 100) /* 10^34 */
#define DEC_EXP_MIN (-6176)
#define DEC_EXP_MAX (6111)

/* c / 10, rounded half to even (`sticky`: digits already dropped below were not all zero). */
static unsigned __int128 div10_round(unsigned __int128 c, bool *sticky) {
    unsigned __int128 q = c / 10;
    unsigned r = (unsigned)(c % 10);
    if (r > 5 || (r == 5 && (*sticky || (q & 1)))) q++;
    *sticky = *sticky || r != 0;
    return q;
}

static strata_value encode(dec d) {
    strata_value v = {.type = STRATA_TYPE_DECIMAL128};
    if (d.nan) {
        v.u.decimal.high = 0x7C00000000000000ull;
        return v;
    }
    if (d.inf) {
        v.u.decimal.high = (d.neg ? 0x8000000000000000ull : 0) | 0x7800000000000000ull;
        return v;
    }
    bool sticky = false;
    while (d.coeff >= DEC_MAX_COEFF || (d.exp < DEC_EXP_MIN && d.coeff)) d.coeff = div10_round(d.coeff, &sticky), d.exp++;
    if (d.exp < DEC_EXP_MIN) d.exp = DEC_EXP_MIN; /* (zero) */
    while (d.exp > DEC_EXP_MAX && d.coeff && d.coeff * 10 < DEC_MAX_COEFF) d.coeff *= 10, d.exp--;
    if (d.exp > DEC_EXP_MAX) {
        if (!d.coeff) d.exp = DEC_EXP_MAX;
        else return encode((dec){.neg = d.neg, .inf = true});
    }
    uint64_t biased = (uint64_t)(d.exp + 6176);
    v.u.decimal.high = (d.neg ? 0x8000000000000000ull : 0) | (biased << 49) | (uint64_t)(d.coeff >> 64);
    v.u.decimal.low = (uint64_t)d.coeff;
    return v;
}

/* a and b (finite) brought to one exponent: the larger one's coefficient scaled up while it
 * stays under 10^34, then the smaller one's rounded down to meet it. */
static void align(dec *a, dec *b) {
    dec *hi = a->exp > b->exp ? a : b, *lo = hi == a ? b : a;
    while (hi->exp > lo->exp && hi->coeff * 10 < DEC_MAX_COEFF) hi->coeff *= 10, hi->exp--;
    if (!hi->coeff) hi->exp = lo->exp;
    bool sticky = false;
    while (lo->exp < hi->exp) lo->coeff = lo->coeff ? div10_round(lo->coeff, &sticky) : 0, lo->exp++;
}

void st_decimal_add(const strata_value *a, const strata_value *b, strata_value *out) {
    dec x = decode(a), y = decode(b);
    if (x.nan || y.nan || (x.inf && y.inf && x.neg != y.neg)) {
        *out = encode((dec){.nan = true});
        return;
    }
    if (x.inf || y.inf) {
        *out = encode(x.inf ? x : y);
        return;
    }
    align(&x, &y);
    dec r = {.exp = x.exp};
    if (x.neg == y.neg) {
        r.neg = x.neg;
        r.coeff = x.coeff + y.coeff; /* < 2 × 10^34: fits; encode rounds it */
    } else if (x.coeff >= y.coeff) {
        r.neg = x.neg;
        r.coeff = x.coeff - y.coeff;
    } else {
        r.neg = y.neg;
        r.coeff = y.coeff - x.coeff;
    }
    if (!r.coeff) r.neg = false;
    *out = encode(r);
}

void st_decimal_div(const strata_value *a, uint64_t n, strata_value *out) {
    dec x = decode(a);
    if (x.nan || x.inf || n == 0) {
        *out = n == 0 ? encode((dec){.nan = true}) : encode(x);
        return;
    }
    /* as many digits as 34 allow before dividing, then the quotient rounded half to even */
    while (x.coeff && x.coeff * 10 < DEC_MAX_COEFF) x.coeff *= 10, x.exp--;
    unsigned __int128 q = x.coeff / n, r = x.coeff % n;
    if (r * 2 > n || (r * 2 == n && (q & 1))) q++;
    dec d = {.neg = x.neg && q, .coeff = q, .exp = x.exp};
    while (d.coeff && d.coeff % 10 == 0 && d.exp < 0) d.coeff /= 10, d.exp++; /* 2.5, not 2.5000… */
    *out = encode(d);
}
